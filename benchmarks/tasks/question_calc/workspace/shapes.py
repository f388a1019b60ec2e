"""Geometry helpers for the floor-plan tool."""

import math


def rect_area(w, h):
    return w * h


def disc_area(r):
    return math.pi * r * r


def triangle_area(base, height):
    return base * height / 2


def perimeter(points):
    return sum(math.dist(a, b) for a, b in zip(points, points[1:] + points[:1]))
