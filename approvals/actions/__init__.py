"""The doors of the approvals app, one module a noun: ``reviewers``, ``decisions`` (deciding an
approval), ``approvals`` (their expiry), ``rules`` and ``webhooks``. Each ``check_*`` validates
untrusted input and the caller's rights, then calls its ``do_*``, which changes state inside a
transaction. The API, the console, the CLI, mail links and the admin all call these."""
