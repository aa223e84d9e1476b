"""The dinner-friday app: a person, a concierge, a search agent and a booking agent."""
