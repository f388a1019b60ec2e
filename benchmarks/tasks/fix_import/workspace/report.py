from stats import mean, spread

SCORES = [3, 5, 10]

if __name__ == "__main__":
    print(f"mean {mean(SCORES):.1f}, spread {spread(SCORES):.1f}")
