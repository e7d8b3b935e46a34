#!/usr/bin/python3
# Writes tests/data/upstream/opencompass-<commit>-datasets.txt from an OpenCompass git dir:
#   make-opencompass-datasets.py GIT_DIR COMMIT SUITE.toml... > opencompass-<commit>-datasets.txt
# (GIT_DIR: e.g. a clone of github.com/open-compass/opencompass.) Every dataset config under
# opencompass/configs/datasets/ at COMMIT gets a `config` line with the *_datasets variables it
# exports (what `from opencompass.configs.datasets.FAMILY.CONFIG import VAR` can name). The configs
# the suites name are also executed (opencompass's own modules stubbed out: only the config's
# Python runs) for an `abbrs` line per exported list: the subsets, in order, that OpenCompass
# writes one predictions/results file for. Sample counts live in the datasets, not the configs:
# the suites' `samples` hold them.
import ast, contextlib, importlib, importlib.machinery, io, os, re, subprocess, sys, tarfile, tempfile, tomllib, types

git_dir, commit, suites = sys.argv[1], sys.argv[2], sys.argv[3:]
full = subprocess.run(["git", "--git-dir", git_dir, "rev-parse", commit], check=True, capture_output=True, text=True).stdout.strip()
tree = subprocess.run(["git", "--git-dir", git_dir, "archive", full, "opencompass/configs/datasets"], check=True, capture_output=True).stdout
root = tempfile.mkdtemp()
tarfile.open(fileobj=io.BytesIO(tree)).extractall(root, filter="data")
base = os.path.join(root, "opencompass/configs/datasets")


def exported(path):
    """Top-level names ending _datasets a config defines or imports."""
    try:
        mod = ast.parse(open(path, encoding="utf-8").read())
    except SyntaxError:
        return []
    names = set()
    for node in ast.walk(mod):
        if isinstance(node, ast.ImportFrom):
            names.update(a.asname or a.name for a in node.names if (a.asname or a.name).endswith("_datasets"))
        elif isinstance(node, (ast.Assign, ast.AugAssign)) and node in mod.body:
            for t in node.targets if isinstance(node, ast.Assign) else [node.target]:
                if isinstance(t, ast.Name) and t.id.endswith("_datasets"):
                    names.add(t.id)
    return sorted(names)


class Stub(types.ModuleType):
    """Any opencompass/mmengine name: a placeholder class (configs only put them in dicts)."""
    __path__ = []

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return type(name, (), {})


class Finder:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("opencompass", "mmengine") and name != "opencompass" and not name.startswith("opencompass.configs"):
            return importlib.machinery.ModuleSpec(name, self)
        return None

    def create_module(self, spec):
        m = Stub(spec.name)
        if spec.name == "mmengine.config":
            m.read_base = contextlib.nullcontext
        return m

    def exec_module(self, module):
        pass


def abbrs(family, config, var):
    sys.meta_path.insert(0, Finder())
    sys.path.insert(0, root)
    try:
        mod = importlib.import_module(f"opencompass.configs.datasets.{family}.{config}")
        return [d["abbr"] for d in getattr(mod, var)]
    finally:
        sys.meta_path.pop(0)
        sys.path.pop(0)


# opencompass/configs has no __init__.py in places: make the packages importable from the tree.
for d, _, files in os.walk(os.path.join(root, "opencompass")):
    if "__init__.py" not in files:
        open(os.path.join(d, "__init__.py"), "w").close()

print(f"# OpenCompass dataset configs at open-compass/opencompass {full}")
print(f"# (0.5.3: opencompass/__init__.py __version__), made by tests/data/upstream/make-opencompass-datasets.py")
print("# from that commit's opencompass/configs/datasets/ (git archive) and " + " ".join(os.path.relpath(s) for s in suites) + ".")
print("# config FAMILY.CONFIG VAR...      the *_datasets variables opencompass/configs/datasets/FAMILY/CONFIG.py exports")
print("# abbrs FAMILY.CONFIG VAR ABBR...  the dataset abbrs of that list (configs the suites name)")
configs = {}
for d, _, files in sorted(os.walk(base)):
    for f in sorted(files):
        if f.endswith(".py") and f != "__init__.py":
            family = os.path.relpath(d, base).replace(os.sep, ".")
            if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", family) and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", f[:-3]):
                configs[f"{family}.{f[:-3]}"] = exported(os.path.join(d, f))
for name, vars_ in sorted(configs.items()):
    print("config", name, *vars_)
for s in suites:
    for ds in tomllib.load(open(s, "rb")).get("dataset", []):
        family, config, *var = ds["name"].split(".")
        var = var[0] if var else f"{family}_datasets"
        print("abbrs", f"{family}.{config}", var, *abbrs(family, config, var))
