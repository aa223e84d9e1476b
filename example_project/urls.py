"""The example's URLs: the admin, chronica's API, its OpenAPI schema, and the dinner app."""

from django.contrib import admin
from django.contrib.auth.decorators import login_required
from django.contrib.auth.views import LoginView
from django.urls import include, path, re_path
from django.views.generic import TemplateView
from drf_spectacular.views import SpectacularAPIView, SpectacularRedocView, SpectacularSwaggerView

from chronica.api.errors import not_found
from example_project.dinner import views
from example_project.signin import throttled_sign_in

urlpatterns = [
    path("", views.index, name="index"),
    path("windows/<str:chronicum_id>/", views.agent_windows, name="agent-windows"),
    path("windows/<str:chronicum_id>/hold/", views.hold_the_table, name="hold-the-table"),
    path(
        "follow/<str:chronicum_id>/",
        login_required(TemplateView.as_view(template_name="dinner/follow.html")),
        name="follow",
    ),
    # The sign-in forms, throttled (example_project/signin.py), ahead of their apps' URLs.
    path("admin/login/", throttled_sign_in(admin.site.login)),
    path("admin/", admin.site.urls),
    path("api/", include("chronica.api.urls")),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="schema"), name="swagger-ui"),
    path("api/redoc/", SpectacularRedocView.as_view(url_name="schema"), name="redoc"),
    path(
        "api-auth/login/",
        throttled_sign_in(LoginView.as_view(template_name="rest_framework/login.html")),
    ),
    path("api-auth/", include("rest_framework.urls")),
    # Last: any other path under the API is a JSON 404, not Django's HTML page.
    re_path(r"^api/", not_found),
]
