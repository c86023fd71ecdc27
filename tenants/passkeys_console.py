"""The console's Passkeys page: a person's own passkeys, registered and removed there. A passkey
confirms a decision a rule marks ``stepUp`` (``approvals.step_up``)."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render

from tenants.models import Passkey
from tenants.passkeys import PasskeyError, RelyingParty, register, registration_options

# Where the registration's challenge waits for the browser's answer.
SESSION_KEY = "kindgi-passkey-challenge"


@login_required
def passkeys_page(request: HttpRequest) -> HttpResponse:
    party = RelyingParty.of(request)
    if request.method == "POST":
        action = request.POST.get("action")
        if action == "options":
            try:
                options, challenge = registration_options(request.user, party)
            except PasskeyError as error:
                return JsonResponse({"error": str(error)}, status=400)
            request.session[SESSION_KEY] = challenge
            return HttpResponse(options, content_type="application/json")
        if action in ("register", "remove") and not request.user.check_password(
            request.POST.get("password", "")
        ):
            # A session alone (stolen, or a browser an agent drives) must not change what
            # confirms decisions: the person says their password again.
            messages.error(request, "Your password was not right: nothing changed.")
            return redirect("console:passkeys")
        if action == "register":
            challenge = request.session.pop(SESSION_KEY, None)
            if not challenge:
                messages.error(request, "Start again: the passkey's challenge was used or never made.")
                return redirect("console:passkeys")
            try:
                made = register(
                    request.user,
                    name=request.POST.get("name", ""),
                    credential=request.POST.get("credential", ""),
                    challenge=challenge,
                    party=party,
                )
            except PasskeyError as error:
                messages.error(request, f"No passkey was registered: {error}")
            else:
                messages.success(request, f"Passkey “{made.name}” registered.")
            return redirect("console:passkeys")
        if action == "remove":
            chosen = request.POST.get("passkey", "")
            removed = 0
            if chosen.isascii() and chosen.isdigit() and len(chosen) < 19:
                removed, _ = Passkey.objects.filter(user=request.user, pk=int(chosen)).delete()
            if removed:
                messages.success(request, "The passkey was removed.")
            else:
                messages.error(request, "You have no such passkey.")
            return redirect("console:passkeys")
        return render(request, "console/bad_request.html", {"reason": "Unknown action."}, status=400)
    keys = Passkey.objects.filter(user=request.user)
    return render(request, "console/passkeys.html", {"passkeys": keys, "site": party.id})
