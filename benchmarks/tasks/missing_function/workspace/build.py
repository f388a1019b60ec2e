from textutil import slugify, title_case

POSTS = ["Hello, World!", "Ten tips for Python"]

if __name__ == "__main__":
    for post in POSTS:
        print(f"{slugify(post)}.html: {title_case(post)}")
