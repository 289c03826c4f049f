"""Module docstring."""
import os.path
from .sibling import helper as h
from ..core import Base

MAX_SIZE: int = 10
default_name = "x"


@dataclass
class Shape(Base, metaclass=Meta):
    """A shape.

    With details.
    """

    SIDES = 0

    def area(self, scale: float = 1.0) -> float:
        """Area."""
        total = self.width * scale
        self.check(total)
        return Shape.compute(total, MAX_SIZE)

    @staticmethod
    def compute(x, y):
        return helper(x) + os.path.join(y)

    class Inner:
        def run(self):
            return [v for v in self.items if v]


async def main(argv: list[Shape]) -> None:
    def local(n):
        return n + len(argv)
    s = Shape()
    s.area()
    print(local(1), default_name, undefined)
