from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from tools.selectors import catalog_summary


def home(request: HttpRequest) -> HttpResponse:
    return render(request, "home.html", {"catalog": catalog_summary()})
