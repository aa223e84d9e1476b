"""Agent frameworks on chronica, one module per framework, each behind its own extra.

A framework's module imports its framework and nothing imports the module by default:
``chronica`` stays usable without any framework installed. (``pydantic_ai_records``
imports no framework: the app loads it so that a PydanticAI record goes with its
chronicum in every process.) Each one calls
``chronica.services`` only, so every rule of chronica (the owner, write order,
validation) holds for a framework's memory exactly as for the API's.
"""
