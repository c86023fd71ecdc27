import signal
import threading

from django.core.management.base import BaseCommand

from mail.smtp import MailReceiver


class Command(BaseCommand):
    help = "Receive mail over SMTP: mail to a mailbox's address starts its agent or flow."

    def add_arguments(self, parser):
        parser.add_argument("--host", default="127.0.0.1")
        parser.add_argument("--port", type=int, default=2525)

    def handle(self, *args, host: str, port: int, **options):
        receiver = MailReceiver(host=host, port=port)
        receiver.start()
        self.stdout.write(f"Receiving mail on {host}:{port} (SMTP); Ctrl-C stops.")
        stopped = threading.Event()
        for signum in (signal.SIGINT, signal.SIGTERM):
            signal.signal(signum, lambda *_: stopped.set())
        stopped.wait()
        receiver.stop()
