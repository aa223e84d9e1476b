from django.apps import AppConfig


class DinnerConfig(AppConfig):
    name = "example_project.dinner"
    label = "dinner"
    verbose_name = "Dinner on Friday (chronica example)"
