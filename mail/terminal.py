"""Mail printed to the terminal in development, for a person to read and click: headers that
matter, then each text part decoded, so that no link is cut by quoted-printable line breaks."""

from django.core.mail.backends import console

from kindgi.summaries import without_controls

SHOWN_HEADERS = ("From", "To", "Cc", "Reply-To", "Subject", "Date")


class ReadableConsoleBackend(console.EmailBackend):
    def write_message(self, message):
        mail = message.message()
        lines = [f"{name}: {mail[name]}" for name in SHOWN_HEADERS if mail[name]]
        texts, others = [], []
        for part in mail.walk():
            if part.is_multipart():
                continue
            if part.get_content_type() == "text/plain" and not part.get_filename():
                texts.append(part.get_content())
            else:
                others.append(part.get_filename() or part.get_content_type())
        lines.append("")
        lines.extend(text.strip("\n") for text in texts)
        if others:
            lines += ["", f"(also in this mail, not shown: {', '.join(others)})"]
        # A mail's text is anyone's to write (a tool's argument, a subject): printed, not obeyed.
        self.stream.write(without_controls("\n".join(lines)) + "\n" + "-" * 79 + "\n")
