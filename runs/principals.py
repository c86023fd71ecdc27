"""Who stands behind a run: its principal, the one person accountable for it (DESIGN §6).

A person's run: that person. A schedule's run: the schedule's owner. A mailbox's run: the
mailbox's owner. A service's run: the person its token names as responsible (a service token
that names no one starts nothing). A child run: its parent's, copied when it is made.

Everything that asks who stands behind a run asks here: four-eyes, connections, notifications,
cancel rights and conversations. Nothing else compares a run's ``started_by``.
"""

from runs.exceptions import PrincipalError
from runs.models import Run, Trigger
from tenants.selectors import is_service_account

SERVICE_TOKEN_HINT = (
    "a tenant admin makes one that does with `manage.py create_api_token --service NAME --responsible USER`"
)


def principal_of(run: Run) -> int | None:
    """The user id of the person accountable for ``run`` (None only for a run older than
    principals that could not be attributed)."""
    return run.principal_id


def acting_for(user, *, token=None):
    """The person ``user`` acts for: themselves; for a service account, the person its token
    (``token``, the ``ApiToken`` it authenticated with) names as responsible, or None."""
    if user is None or not getattr(user, "is_authenticated", True):
        return None
    if not is_service_account(user):
        return user
    if token is None or getattr(token, "user_id", None) != user.pk:
        return None
    return token.responsible


def principal_for_start(*, trigger: str, tenant, acting_user=None, token=None, on_behalf_of=None):
    """The principal of a run about to start, or ``PrincipalError`` when no person of ``tenant``
    would stand behind it.

    ``acting_user`` started it (a person, or a service account with its ``token``);
    ``on_behalf_of`` is the person a run no person started runs for (a schedule's or mailbox's
    owner, or whoever in-process code names)."""
    if trigger == Trigger.PERSON:
        principal, what = acting_user, "the person who starts it"
    elif on_behalf_of is not None:
        principal, what = on_behalf_of, f"on whose behalf this {trigger} run would run"
    elif is_service_account(acting_user):
        principal = acting_for(acting_user, token=token)
        if principal is None:
            raise PrincipalError(
                f"the token of service account {acting_user.get_username()} names no person responsible "
                f"for the runs it starts, so it starts none; {SERVICE_TOKEN_HINT}"
            )
        what = f"the person responsible for {acting_user.get_username()}'s token"
    else:
        raise PrincipalError(
            f"a {trigger} run needs a person to stand behind it (its principal); none was named"
        )
    membership = getattr(principal, "membership", None)
    if membership is None or membership.tenant_id != tenant.pk or not principal.is_active:
        raise PrincipalError(
            f"{principal.get_username()} ({what}) is not an active person of tenant {tenant.slug}, so "
            "the run has no one to stand behind it"
        )
    if membership.is_service_account:
        raise PrincipalError(
            f"{principal.get_username()} ({what}) is a service account; a run's principal is a person"
        )
    return principal
