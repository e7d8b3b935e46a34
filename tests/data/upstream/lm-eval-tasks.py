#!/usr/bin/python3
# Lists the task, group and tag names an lm-evaluation-harness checkout registers, the way its
# TaskIndex does (lm_eval/tasks/_index.py and _yaml_loader.py at EleutherAI/lm-evaluation-harness
# 4e7e0d47f): every **/*.yaml under the tasks directory, in sorted path order, its `include`s
# merged in (the file's own keys win); a config with `class` is a (Python) task, with `group` a
# group, with `task` a task; a task's `tag`s become tags; the first of two same names wins;
# a file that does not load is skipped. For each task it also prints what decides whether a
# shard sees the whole run's few-shot exemplars: num_fewshot and fewshot_config.sampler.
#
#   git -C LM_EVAL_GIT archive COMMIT lm_eval/tasks | tar -x -C DIR
#   tests/data/upstream/lm-eval-tasks.py DIR/lm_eval/tasks COMMIT > tests/data/upstream/lm-eval-COMMIT8-tasks.txt
import os
import sys

import yaml

IGNORE = {"__pycache__", ".ipynb_checkpoints"}


class Loader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):
    pass


# !function utils.x: the file names it, never imported here (TaskIndex loads with resolve_func=False).
Loader.add_constructor("!function", lambda loader, node: "!function " + loader.construct_scalar(node))


def load(path, seen=()):
    path = os.path.realpath(path)
    if path in seen:
        raise ValueError(f"include cycle at {path}")
    with open(path, "rb") as fh:
        cfg = yaml.load(fh, Loader=Loader)
    if not isinstance(cfg, dict):
        raise ValueError(f"{path} is no mapping")
    if "include" not in cfg:
        return cfg
    includes = cfg.pop("include")
    merged = {}
    for inc in includes if isinstance(includes, list) else [includes]:
        sub = load(inc if os.path.isabs(inc) else os.path.join(os.path.dirname(path), inc), seen + (path,))
        sub.pop("task_list", None)
        merged.update(sub)
    merged.update(cfg)
    return merged


def main():
    root, commit = sys.argv[1], sys.argv[2]
    files = []
    for d, dirs, names in os.walk(root):
        dirs[:] = [x for x in dirs if x not in IGNORE]
        files += [os.path.join(d, n) for n in names if n.endswith(".yaml")]
    index = {}  # name -> (kind, num_fewshot, sampler)
    for path in sorted(files, key=lambda p: os.path.relpath(p, root)):
        try:
            cfg = load(path)
            if "class" in cfg:
                kind = "task"
            elif "group" in cfg:
                kind = "group"
            elif "task" in cfg:
                kind = "task"
            else:
                continue
            name = cfg["group"] if kind == "group" and "class" not in cfg else cfg["task"]
        except Exception:
            continue
        if not isinstance(name, str) or name in index:
            continue
        if kind == "group":
            index[name] = ("group", "-", "-")
            continue
        fewshot = cfg.get("fewshot_config") or {}
        sampler = fewshot.get("sampler", "default") if isinstance(fewshot, dict) else "default"
        index[name] = ("task", str(cfg.get("num_fewshot") or 0), str(sampler))
        tags = cfg.get("tag") or []
        for tag in tags if isinstance(tags, list) else [tags]:
            index.setdefault(tag, ("tag", "-", "-"))
    print(f"# lm-evaluation-harness task, group and tag names at EleutherAI/lm-evaluation-harness {commit}")
    print("# (lm_eval 0.4.13.dev0), as its TaskIndex registers them. Made by tests/data/upstream/lm-eval-tasks.py:")
    print(f"#   git -C lm-evaluation-harness archive {commit} lm_eval/tasks | tar -x -C DIR")
    print(f"#   tests/data/upstream/lm-eval-tasks.py DIR/lm_eval/tasks {commit} > THIS_FILE")
    print("# Columns: name, kind (task|group|tag), num_fewshot, fewshot sampler (tasks; '-' otherwise).")
    for name in sorted(index):
        print("\t".join((name,) + index[name]))


if __name__ == "__main__":
    main()
