"""The one error type users see: a cause and a fix, printed on one line."""


class GauntletError(Exception):
    def __init__(self, cause: str, fix: str) -> None:
        super().__init__(f"{cause}. {fix}")
        self.cause = cause
        self.fix = fix
