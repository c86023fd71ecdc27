from approvals.management.commands.verify_chains import Command as VerifyChains


class Command(VerifyChains):
    help = "The former name of verify_chains, kept: " + VerifyChains.help
