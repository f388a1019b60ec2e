"""The allow lists of argument shapes, per program (and per subcommand): the data shapes.py reads.

An entry is an option a scope for that program covers: `-m:` takes a value (attached or the next
word), `--rebase=` an optional value only attached, a bare name is a flag. What is not here asks.
Nothing here may name a program to run, a hook, a config override or an exec (shapes.NEVER: a test
in tests/policy/test_program_shapes.py holds every table to it). Decided, and why:
- git's `-C`, make's `-C`/`-f`/`-I`: another folder's config, hooks or makefile; they ask;
- pip's `--index-url`, npm's `--registry`: where packages come from is a network destination, the
  proxy's job (Grant.hosts), so they are allowed;
- `-c` and `-e` are on no list, even where they are harmless (`grep -c`, `switch -c`): one rule a
  reader can check beats a per-program exception.
"""

from __future__ import annotations

from dataclasses import dataclass, field

FLAG, VALUE, OPTIONAL = "flag", "value", "optional"
Options = dict[str, str]


def _t(spec: str) -> Options:
    """`-m: --message: -a --all -j=`: a trailing `:` takes a value (attached or the next word),
    `=` an optional value only when attached (`--rebase=merges`, `-j4`), none a bare flag."""
    out: Options = {}
    for word in spec.split():
        if word.endswith(":"):
            out[word[:-1]] = VALUE
        elif word.endswith("=") and len(word) > 2:
            out[word[:-1]] = OPTIONAL
        else:
            out[word] = FLAG
    return out


@dataclass(frozen=True)
class Shape:
    options: Options = field(default_factory=dict)
    # With subcommands: the one allowed after the program's own options; any other one asks.
    subcommands: dict[str, Options] | None = None
    single_dash_long: bool = False  # go: `-run=TestX`, `-count 1`
    specs: bool = False  # pip: a positional `pkg>=1.0` is a version spec, not an assignment
    numeric: bool = False  # `git log -5`
    # Words past `--` are operands, whatever they look like: only for a program known to read
    # `--` so (git's paths, `cargo test -- --nocapture`); elsewhere they are checked like the rest.
    dashdash: bool = False


_Q = " -q --quiet -v --verbose -h --help"
_FETCH = (
    " --all -a --append --depth: --deepen: --shallow-since: --shallow-exclude: --unshallow"
    " -t --tags --no-tags -p --prune -P --prune-tags -f --force -n --dry-run --progress"
    " --no-progress -j: --jobs: --set-upstream --atomic --refetch --no-recurse-submodules"
    " --update-shallow --keep -k --multiple --ipv4 -4 --ipv6 -6 --negotiate-only"
)
_MERGE = (
    " --ff --no-ff --ff-only --squash --no-squash --commit --no-commit --stat --no-stat"
    " --summary --log= --no-log --no-edit --no-verify --verify --autostash --no-autostash"
    " --allow-unrelated-histories --signoff --no-signoff --rerere-autoupdate"
)
_DIFF = (
    " --stat= --shortstat --numstat --name-only --name-status --summary -p --patch -s --no-patch"
    " -U: --unified: --color= --no-color --word-diff= --word-diff-regex: --color-words="
    " --check -w --ignore-all-space -b --ignore-space-change --ignore-blank-lines -R -M= -C="
    " --find-renames= --find-copies= --diff-filter: --exit-code --quiet --no-ext-diff"
    " --no-textconv --abbrev= --full-index --binary --minimal --patience --histogram --relative="
    " --no-relative --raw -z --dirstat= --compact-summary --ignore-submodules= --src-prefix:"
    " --dst-prefix: --no-prefix --output-indicator-new: --merge-base --cached --staged"
)
_LOG = (
    " -n: --max-count: --skip: --oneline --graph --all --branches= --tags= --remotes="
    " --decorate= --no-decorate --format: --pretty= --date: --since: --after: --until:"
    " --before: --author: --committer: --grep: -i --regexp-ignore-case --all-match --invert-grep"
    " --follow --reverse --no-merges --merges --first-parent --left-right --cherry-pick"
    " --topo-order --date-order --abbrev-commit --no-abbrev-commit"
    " -L: -G: -S: --pickaxe-regex --source --ancestry-path --simplify-by-decoration"
)

GIT = Shape(
    options=_t("--no-pager -P --no-optional-locks --literal-pathspecs --version --help"),
    subcommands={
        "push": _t(
            "-u --set-upstream -f --force --force-with-lease= --no-force-with-lease"
            " --force-if-includes --tags --follow-tags --no-follow-tags --all --branches --mirror"
            " -d --delete -n --dry-run --no-verify --verify --progress --no-progress --porcelain"
            " --atomic --no-atomic --prune -o: --push-option: --signed= --no-signed -4 -6" + _Q
        ),
        "pull": _t(_FETCH + _MERGE + " -r --rebase= --no-rebase" + _Q),
        "fetch": _t(_FETCH + _Q),
        "clone": _t(
            "--depth: -b: --branch: --single-branch --no-single-branch --no-tags --bare"
            " --mirror -n --no-checkout -o: --origin: --filter: --sparse --also-filter-submodules"
            " --shallow-since: --shallow-exclude: --progress --no-progress -l --local"
            " --no-hardlinks -s --shared --dissociate --reject-shallow --no-reject-shallow" + _Q
        ),
        "add": _t(
            "-A --all -u --update -n --dry-run -f --force -N --intent-to-add --ignore-errors"
            " --ignore-missing --renormalize --no-all --ignore-removal --sparse --chmod:" + _Q
        ),
        "commit": _t(
            "-m: --message: -a --all -F: --file: --amend --no-edit -s --signoff --no-signoff"
            " --allow-empty --allow-empty-message -n --no-verify --verify --author: --date:"
            " --fixup: --squash: --reset-author --only -o --include -i --dry-run --short"
            " --porcelain --branch --no-status --status --cleanup: --trailer:" + _Q
        ),
        "status": _t(
            "-s --short -b --branch --porcelain= --long -u= --untracked-files= --ignored="
            " --ignore-submodules= --show-stash --ahead-behind --no-ahead-behind --column="
            " --no-column --renames --no-renames -z" + _Q
        ),
        "diff": _t(_DIFF + _Q),
        "log": _t(_LOG + _DIFF + _Q),
        "show": _t(_LOG + _DIFF + _Q),
        "checkout": _t(
            "-b: -B: -t --track= --no-track -f --force -m --merge --detach --orphan: --ours"
            " --theirs --conflict: --no-guess --guess --progress --no-progress" + _Q
        ),
        "switch": _t(
            "--create: -C: --force-create: -d --detach -f --force --discard-changes -m"
            " --merge -t --track= --no-track --orphan: --guess --no-guess --progress"
            " --no-progress --conflict:" + _Q
        ),
        "branch": _t(
            "-a --all -r --remotes -l --list -d --delete -D -m --move -M --copy -C -f --force"
            " --show-current --set-upstream-to: -u: --unset-upstream -t --track= --no-track"
            " --merged= --no-merged= --contains= --no-contains= --points-at: --sort: --format:"
            " --column= --no-column --color= --no-color --abbrev= --no-abbrev -i --ignore-case"
            " --create-reflog" + _Q
        ),
        "merge": _t(_MERGE + " -m: --abort --continue --quit -n --progress --no-progress" + _Q),
        "rebase": _t(
            "--onto: --keep-base --continue --abort --skip --quit --autosquash --no-autosquash"
            " --autostash --no-autostash --root --keep-empty --no-keep-empty --empty:"
            " --update-refs --no-update-refs --fork-point --no-fork-point -f --force-rebase"
            " --no-ff --committer-date-is-author-date --reset-author-date --signoff --stat -n"
            " --no-stat --no-verify --verify --rebase-merges= --no-rebase-merges" + _Q
        ),
        "stash": _t(
            "-m: --message: -u --include-untracked -k --keep-index --no-keep-index -a --all"
            " --index --staged -S --only-untracked" + _Q
        ),
        "tag": _t(
            "-a --annotate -m: --message: -F: --file: -d --delete -l --list -f --force -n="
            " --sort: --contains= --no-contains= --points-at: --merged= --no-merged= --format:"
            " --column= --no-column -i --ignore-case --cleanup:" + _Q
        ),
        "rm": _t("-r -f --force --cached -n --dry-run --ignore-unmatch --sparse" + _Q),
        "mv": _t("-f --force -k -n --dry-run --sparse" + _Q),
        "restore": _t(
            "-s: --source: -S --staged -W --worktree --ours --theirs -m --merge --conflict:"
            " --ignore-unmerged --overlay --no-overlay --progress --no-progress" + _Q
        ),
        "reset": _t(
            "--soft --mixed --hard --keep --merge -N --intent-to-add --no-refresh --refresh" + _Q
        ),
    },
    numeric=True,
    dashdash=True,
)

CURL = Shape(
    _t(
        "-s --silent -S --show-error -L --location -f --fail --fail-with-body --fail-early"
        " -o: --output: -O --remote-name --remote-name-all -J --remote-header-name --create-dirs"
        " -I --head -i --include -v --verbose -X: --request: -H: --header: -d: --data:"
        " --data-raw: --data-binary: --data-urlencode: --data-ascii: -F: --form: --form-string:"
        " --json: -u: --user: -A: --user-agent: -m: --max-time: --connect-timeout: --retry:"
        " --retry-delay: --retry-max-time: --retry-all-errors --retry-connrefused -w:"
        " --write-out: --compressed -k --insecure -G --get -C: --continue-at: -r: --range:"
        " -b: --cookie: --cookie-jar: -# --progress-bar -N --no-buffer -T: --upload-file:"
        " --max-filesize: --limit-rate: --http1.0 --http1.1 --http2 --tlsv1.2 --tlsv1.3 -4 -6"
        " --ipv4 --ipv6 --max-redirs: --post301 --post302 --post303 -z: --time-cond: -R"
        " --remote-time -n --netrc --oauth2-bearer: --basic --digest --url-query: -D:"
        " --dump-header: --stderr: --trace-ascii: --no-progress-meter --etag-save:"
        " --etag-compare: --show-headers -Z --parallel -q --disable -h --help -V --version"
    )
)
WGET = Shape(
    _t(
        "-q --quiet -v --verbose -nv --no-verbose -O: --output-document: -P: --directory-prefix:"
        " --continue -N --timestamping -S --server-response --spider -t: --tries: -T:"
        " --timeout: --header: -U: --user-agent: --no-check-certificate -nc --no-clobber"
        " --show-progress --progress: -4 -6 --inet4-only --inet6-only --content-disposition"
        " --max-redirect: --user: --password: --post-data: --post-file: --method: --body-data:"
        " --retry-connrefused --waitretry: -w: --wait: -h --help -V --version"
    )
)
_PIP_INSTALL = (
    " -r: --requirement: -U --upgrade --upgrade-strategy: --user --no-deps --pre --no-cache-dir"
    " -i: --index-url: --extra-index-url: --no-index -f: --find-links: -t: --target:"
    " --dry-run --force-reinstall --ignore-installed -I --no-build-isolation --only-binary:"
    " --no-binary: --prefer-binary --require-hashes --root-user-action: --break-system-packages"
    " --no-warn-script-location --progress-bar: --report: --timeout: --retries:"
)
_PIP = " -q --quiet -v --verbose --disable-pip-version-check --no-input --no-color --isolated"
PIP = Shape(
    _t(_PIP + " -V --version -h --help"),
    subcommands={
        "install": _t(_PIP_INSTALL + _PIP),
        "download": _t(_PIP_INSTALL + " -d: --dest:" + _PIP),
        "uninstall": _t("-y --yes -r: --requirement: --break-system-packages" + _PIP),
        "list": _t("-o --outdated -u --uptodate --user -l --local --format: --not-required" + _PIP),
        "show": _t("-f --files" + _PIP),
        "freeze": _t("--all -l --local --user --exclude-editable -r: --requirement:" + _PIP),
        "check": _t(_PIP),
        "index": _t(_PIP + " -i: --index-url: --pre"),
    },
    specs=True,
)
_NPM = (
    " -D --save-dev -P --save-prod -O --save-optional -E --save-exact -B --save-bundle --save"
    " --no-save -g --global --production --omit: --include: --no-audit --audit --no-fund"
    " --legacy-peer-deps --strict-peer-deps --force -f --silent -s --quiet -q -d --loglevel:"
    " --ignore-scripts --json --parseable -w: --workspace: --workspaces -ws --if-present"
    " --depth: --all -a --long -l --registry: --dry-run --no-package-lock --package-lock-only"
    " --prefer-offline --offline --no-progress --foreground-scripts --install-links -h --help"
)
NPM = Shape(
    _t(_NPM + " -v --version"),
    subcommands={
        sub: _t(_NPM)
        for sub in "install i ci add uninstall remove rm un update up test t run run-script ls"
        " list outdated audit view info pack init start stop restart rebuild dedupe prune why"
        " explain".split()
    },
    dashdash=True,
)
_YARN = (
    " -D --dev -P --peer -O --optional -E --exact -T --tilde --frozen-lockfile --immutable"
    " --pure-lockfile --silent -s --prefer-offline --offline --ignore-scripts --production"
    " --verbose --json --non-interactive -W --ignore-workspace-root-check -h --help"
)
YARN = Shape(
    _t(_YARN + " -v --version"),
    subcommands={
        sub: _t(_YARN)
        for sub in "install add remove run test build lint upgrade up why list info init"
        " outdated audit".split()
    },
    dashdash=True,
)
_PNPM = (
    " -D --save-dev -P --save-prod -O --save-optional -E --save-exact --frozen-lockfile"
    " --no-frozen-lockfile --prefer-offline --offline --filter: -F: -r --recursive -w"
    " --workspace-root --silent -s --ignore-scripts --reporter: --depth: --json --long"
    " --if-present --production --dev -g --global -h --help"
)
PNPM = Shape(
    _t(_PNPM + " -v --version"),
    subcommands={
        sub: _t(_PNPM)
        for sub in "install i add remove rm uninstall run test t update up list ls why"
        " outdated audit build rebuild prune".split()
    },
    dashdash=True,
)
_CARGO = (
    " --release -r -p: --package: --bin: --bins --lib --tests --test: --examples --example:"
    " --benches --bench: --all-targets --workspace --all --exclude: --all-features --features:"
    " -F: --no-default-features --target: --target-dir: -j: --jobs: --locked --offline --frozen"
    " --message-format: --manifest-path: --no-run --doc --no-fail-fast --check --color:"
    " --keep-going --timings= --profile: --fix --allow-dirty --allow-staged --open --no-deps"
    " --dev --build --optional --dry-run --name: --vcs: --edition: -i --invert --depth:"
    " --format-version: --precise: --aggressive" + _Q + " -vv --frozen"
)
CARGO = Shape(
    _t("-V --version -h --help --list" + _Q + " --locked --offline --frozen"),
    subcommands={
        sub: _t(_CARGO)
        for sub in "build b check c test t run r clippy fmt doc bench clean update add remove"
        " rm tree metadata fetch new init search".split()
    },
    dashdash=True,
)
_GO = (
    " -v -x -n -a -race -msan -asan -cover -covermode: -coverpkg: -coverprofile: -count: -run:"
    " -skip: -bench: -benchmem -benchtime: -timeout: -short -failfast -json -o: -tags: -trimpath"
    " -mod: -p: -cpu: -shuffle: -parallel: -list: -fuzz: -fuzztime: -u -d -t -m -f: -l -w -s"
    " -buildvcs: -compiler: -installsuffix: -work -modcacherw -fix -h -help"
)
GO = Shape(
    _t("-h -help"),
    subcommands={
        sub: _t(_GO)
        for sub in "build test vet run fmt mod get install list clean version env doc".split()
    },
    single_dash_long=True,
)
MAKE = Shape(
    _t(
        "-j= --jobs= -k --keep-going -S --no-keep-going --stop -n --dry-run --just-print --recon"
        " -s --silent --quiet -B --always-make -q --question -w --print-directory"
        " --no-print-directory -l= --load-average= -i --ignore-errors -r --no-builtin-rules"
        " -R --no-builtin-variables -d --debug= -t --touch -O= --output-sync= -h --help -v"
        " --version -p --print-data-base --warn-undefined-variables"
    )
)
PYTEST = Shape(
    _t(
        "-q --quiet -v --verbose -x --exitfirst -s --capture: -k: -m: --maxfail: --lf"
        " --last-failed --ff --failed-first --nf --new-first --sw --stepwise --tb: -r: -l"
        " --showlocals --durations: --durations-min: --co --collect-only --no-header"
        " --no-summary -n: --dist: --cov= --cov-report: --cov-fail-under: --no-cov --timeout:"
        " --import-mode: --basetemp: --strict-markers --runxfail -h --help"
        " --version --color: --disable-warnings --ignore: --ignore-glob: --deselect:"
        " --doctest-modules --cache-clear --count: --random-order --junitxml: --junit-xml:"
    )
)
RUFF = Shape(
    _t("-h --help -V --version"),
    subcommands={
        sub: _t(
            "--fix --no-fix --unsafe-fixes --no-unsafe-fixes --diff --check --show-fixes"
            " --select: --ignore: --extend-select: --extend-ignore: --per-file-ignores:"
            " --output-format: --line-length: --target-version: --statistics --exit-zero"
            " --exit-non-zero-on-fix --no-cache --force-exclude --preview --no-preview"
            " --exclude: --extend-exclude: --respect-gitignore -n -s --silent -w --watch" + _Q
        )
        for sub in ("check", "format", "rule", "version")
    },
)
MYPY = Shape(
    _t(
        "--strict --ignore-missing-imports --show-error-codes --hide-error-codes --pretty"
        " --no-error-summary -p: --package: -m: --module: --python-version: --follow-imports:"
        " --no-incremental --cache-dir: --warn-unused-ignores --check-untyped-defs"
        " --disallow-untyped-defs --no-implicit-optional --show-column-numbers --no-color-output"
        " --explicit-package-bases --namespace-packages --exclude: --junit-xml: --soft-error-limit:"
        + _Q
        + " -V --version"
    )
)
_LS = _t(
    "-a -A -l -h -R -r -t -S -1 -d -F -G -i -n -s -X --all --almost-all --human-readable"
    " --recursive --reverse --sort: --color= --classify --group-directories-first"
    " --time-style: --full-time --directory -L --dereference"
)
GREP = Shape(
    _t(
        "-r -R --recursive -n --line-number -i --ignore-case -l --files-with-matches -L"
        " --files-without-match --count -v --invert-match -w --word-regexp -x --line-regexp -E"
        " --extended-regexp -F --fixed-strings -P --perl-regexp -H -h -o --only-matching -q -s"
        " --no-messages -A: -B: -C: -m: --max-count: --include: --exclude: --exclude-dir: --color="
        " --colour= -I -a --text -b -Z --null -z --label: -U --binary --no-filename --with-filename"
    )
)
RG = Shape(
    _t(
        "-n --line-number -N --no-line-number -i --ignore-case -s --case-sensitive -S --smart-case"
        " -l --files-with-matches --files-without-match --count -v --invert-match -w"
        " --word-regexp -x --line-regexp -F --fixed-strings -P --pcre2 -g: --glob: --iglob: -t:"
        " --type: -T: --type-not: -A: -B: -C: -m: --max-count: --max-depth: -d: --hidden"
        " --no-ignore -u -. -L --follow --files --json --vimgrep -o --only-matching -q"
        " --quiet --color: --no-heading --heading -H --with-filename -I --no-filename -U"
        " --multiline --sort: --type-list -0 --null --trim -M: --max-columns:"
    )
)
_FILES = {
    "mkdir": _t("-p --parents -v --verbose -m: --mode:"),
    "touch": _t("-a -m -d: --date: -r: --reference: -t: --no-create -h"),
    "rm": _t("-r -R --recursive -f --force -d --dir -v --verbose -i -I --one-file-system"),
    "cp": _t(
        "-r -R --recursive -a --archive -p -f --force -v --verbose -n --no-clobber -i -u"
        " --update= -L --dereference -P --no-dereference -T --no-target-directory -t:"
        " --target-directory: -l --link -s --symbolic-link --preserve= --parents -b --backup="
    ),
    "mv": _t(
        "-f --force -v --verbose -n --no-clobber -i -u --update= -T --no-target-directory -t:"
        " --target-directory: -b --backup="
    ),
    "ln": _t("-s --symbolic -f --force -n --no-dereference -v --verbose -r --relative -T"),
    "chmod": _t("-R --recursive -v --verbose -f --silent --quiet"),
    "diff": _t(
        "-u -U: --unified= -r --recursive -N --new-file -q --brief -w -b -B -i --color="
        " -y --side-by-side --suppress-common-lines -s --report-identical-files -x: --exclude:"
    ),
    "grep": GREP.options,
    "rg": RG.options,
    "ls": _LS,
}

TABLES: dict[str, Shape] = {
    "git": GIT,
    "curl": CURL,
    "wget": WGET,
    "pip": PIP,
    "pip3": PIP,
    "npm": NPM,
    "yarn": YARN,
    "pnpm": PNPM,
    "cargo": CARGO,
    "go": GO,
    "make": MAKE,
    "gmake": MAKE,
    "pytest": PYTEST,
    "py.test": PYTEST,
    "ruff": RUFF,
    "mypy": MYPY,
    **{name: Shape(opts) for name, opts in _FILES.items()},
}
