"""Whether a mail carries a valid DKIM signature of its sender's own domain (``dkimpy``).

Public keys come from DNS, or first from ``KINDGI_MAIL_DKIM_KEYS`` (``{"<selector>._domainkey.
<domain>": "v=DKIM1; k=rsa; p=…"}``): keys known ahead, for a closed network or a test.
"""

from core.conf import setting


def _txt(name: bytes, timeout: int = 5) -> bytes | None:
    import dkim.dnsplug

    known = setting("KINDGI_MAIL_DKIM_KEYS") or {}
    record = known.get(name.decode("ascii", errors="replace").rstrip("."))
    if record is not None:
        return record.encode()
    return dkim.dnsplug.get_txt(name, timeout=timeout)


def dkim_failure(raw: bytes, from_address: str) -> str | None:
    """Why ``raw`` has no valid DKIM signature of ``from_address``'s domain, or None when it has."""
    import dkim  # with its DNS resolver, only for mailboxes that check: not at every process's start

    domain = from_address.rsplit("@", 1)[-1].lower()
    checker = dkim.DKIM(raw)
    try:
        valid = checker.verify(dnsfunc=_txt)
    except dkim.DKIMException as error:
        return f"its DKIM signature does not verify ({error})"
    except Exception as error:  # a DNS failure, a malformed key: not verified
        return f"its DKIM signature could not be checked ({type(error).__name__})"
    if not valid:
        return "it has no DKIM signature that verifies"
    signed = (checker.domain or b"").decode("ascii", errors="replace").lower()
    if domain != signed and not domain.endswith("." + signed):
        return f"its DKIM signature is {signed}'s, not its sender's domain {domain}"
    return None
