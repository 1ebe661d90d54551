class Shape:
    count = 0
    def __init__(self, name):
        self.name = name
        Shape.count += 1
    def area(self):
        raise NotImplementedError
    def __repr__(self):
        return f"{type(self).__name__}({self.name!r}, area={self.area():.2f})"
class Rect(Shape):
    def __init__(self, w, h):
        super().__init__("rect")
        self.w, self.h = w, h
    def area(self):
        return self.w * self.h
class Square(Rect):
    def __init__(self, side):
        super().__init__(side, side)
        self.name = "square"
class Circle(Shape):
    def __init__(self, r):
        super().__init__("circle")
        self.r = r
    def area(self):
        return 3.14159 * self.r ** 2
shapes = [Rect(2, 3), Square(4), Circle(1)]
print(shapes)
print(sorted(shapes, key=lambda s: s.area())[0].name, Shape.count)
print(Square.__mro__[1].__name__, isinstance(shapes[1], Rect), issubclass(Circle, Rect))
