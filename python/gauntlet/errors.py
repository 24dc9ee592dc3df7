"""The one error type users see: a cause and a fix, printed on one line."""


class GauntletError(Exception):
    def __init__(self, cause: str, fix: str) -> None:
        super().__init__(f"{cause}. {fix}")
        self.cause = cause
        self.fix = fix

    @classmethod
    def from_engine(cls, message: str) -> "GauntletError":
        """The engine words its errors as 'cause: fix'."""
        cause, _, fix = str(message).rpartition(": ")
        if not cause:
            return cls(fix, "see the message above")
        return cls(cause, fix[:1].upper() + fix[1:])
