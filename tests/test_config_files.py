"""Hosts inventories (TOML, Ansible YAML) and builds files as a hostile or careless user
writes them (issue 30): every malformed shape is one line naming the file, the key and
what it takes; YAML alias bombs and self-referencing aliases are refused early; a host
name ssh would read as an option never reaches ssh."""

import subprocess
import sys

import pytest

from msgbench.core.paths import REPO_ROOT
from msgbench.hosts import inventory as hosts
from msgbench.running.builds import BuildError, load_file
from tests.test_runner import run_cli


def one_line(exc: Exception, *words: str) -> None:
    text = str(exc)
    assert "\n" not in text, text
    for word in words:
        assert word in text, text


@pytest.mark.parametrize(("name", "content", "words"), [
    ("hosts.toml", "hosts = 3\n", ["hosts must be a table", "not a number"]),
    ("hosts.toml", '[hosts]\nh1 = "x"\n', ["hosts.h1 must be a table", "not text"]),
    ("hosts.toml", "[hosts.h1]\ndir = 5\n", ["hosts.h1.dir must be text"]),
    ("hosts.toml", '[hosts.h1]\ndeploy = ["rsync"]\n', ["hosts.h1.deploy must be text", "not a list"]),
    ("hosts.toml", '[hosts.h1]\npython = "py\\u0000"\n', ["hosts.h1.python", "without control characters"]),
    ("hosts.toml", "ssh_config = 1\n", ["ssh_config must be text"]),
    ("hosts.toml", '[hosts."-oProxyCommand=touch x"]\n', ["hosts.-oProxyCommand", "not starting with '-'"]),
    ("inventory.yml", "- a\n- b\n", ["the document (groups) must be a table", "not a list"]),
    ("inventory.yml", "all: [1, 2]\n", ["all must be a table"]),
    ("inventory.yml", "all:\n  hosts: [a, b]\n", ["all.hosts must be a table"]),
    ("inventory.yml", "all:\n  hosts:\n    h1: 5\n", ["all.hosts.h1 must be a table"]),
    ("inventory.yml", "all:\n  hosts:\n    h1:\n      ansible_port: ssh\n",
     ["all.hosts.h1.ansible_port must be a port number"]),
    ("inventory.yml", "all:\n  hosts:\n    h1:\n      ansible_port: 70000\n", ["ansible_port", "65535"]),
    ("inventory.yml", "all:\n  hosts:\n    h1:\n      ansible_host: [1]\n", ["all.hosts.h1.ansible_host", "a list"]),
    ("inventory.yml", "all:\n  hosts:\n    h1:\n      ansible_host: -oProxyCommand=x\n",
     ["ansible_host", "not starting with '-'"]),
    ("inventory.yml", "all:\n  hosts:\n    -oProxyCommand=touch x:\n", ["all.hosts", "not starting with '-'"]),
    ("inventory.yml", "all:\n  hosts:\n    10:\n", ["all.hosts (a host's name) must be text", "not a number"]),
    ("inventory.yml", "all:\n  children: 3\n", ["all.children must be a table"]),
    ("inventory.yml", "all:\n  hosts:\n    h1:\n      msgbench_dir: {a: 1}\n",
     ["all.hosts.h1.msgbench_dir must be text"]),
])
def test_a_malformed_inventory_is_one_line_naming_file_key_and_type(tmp_path, name, content, words):
    path = tmp_path / name
    path.write_text(content)
    with pytest.raises(hosts.HostError) as caught:
        hosts.load_inventory(path)
    one_line(caught.value, str(path), *words)


@pytest.mark.parametrize(("content", "words"), [
    ("build = [1, 2]\n", ["build 1 must be a table", "not a number"]),
    ('[[build]]\ntarget = 1\nlabel = "a"\n', ["build 1.target must be text"]),
    ('[[build]]\ntarget = "fake"\n', ["build 1: label is required"]),
    ('[[build]]\ntarget = "fake"\nlabel = "a"\nenv = { "A=B" = "c" }\n', ["build 1.env", "no '='", "'A=B'"]),
    ('[[build]]\ntarget = "fake"\nlabel = "a"\nenv = { "" = "c" }\n', ["build 1.env", "variable names"]),
    ('[[build]]\ntarget = "fake"\nlabel = "a"\nenv = { A = 1 }\n', ["build 1.env.A must be text"]),
    ('[[build]]\ntarget = "fake"\nlabel = "a"\nenv = { A = "x\\u0000y" }\n', ["build 1.env.A", "control"]),
    ('[[build]]\ntarget = "fake"\nlabel = "a"\nenv = "A=1"\n', ["build 1.env must be a table"]),
    ('[[build]]\ntarget = "fake"\nlabel = "a"\nargs = "+sbt"\n', ["build 1.args must be a list of text"]),
    ('[[build]]\ntarget = "fake"\nlabel = "a"\nargs = [1]\n', ["build 1.args[1] must be text"]),
    ('[[build]]\ntarget = "fake"\nlabel = "a"\npath = 5\n', ["build 1.path must be text"]),
])
def test_a_malformed_builds_file_is_one_line_naming_file_key_and_type(tmp_path, content, words):
    path = tmp_path / "builds.toml"
    path.write_text(content)
    with pytest.raises(BuildError) as caught:
        load_file(path)
    one_line(caught.value, str(path), *words)


@pytest.mark.parametrize("name", ["hosts.toml", "inventory.yml", "builds.toml"])
@pytest.mark.parametrize(("data", "words"), [
    (b"[hosts.h1]\n\xff\xfe\n", ["is not UTF-8 text", "0xff", "offset 11"]),
    (b"[hosts.h1]\0\n", ["is a binary file", "offset 10"]),
])
def test_a_binary_or_non_utf8_file_is_one_line(tmp_path, name, data, words):
    path = tmp_path / name
    path.write_bytes(data)
    with pytest.raises((hosts.HostError, BuildError)) as caught:
        (load_file if name == "builds.toml" else hosts.load_inventory)(path)
    one_line(caught.value, str(path), *words)


def test_the_cli_says_a_malformed_file_in_one_line(fake_targets, tmp_path, capsys):
    (tmp_path / "builds.toml").write_text('[[build]]\ntarget = "fake"\nlabel = "a"\nenv = { "A=B" = "c" }\n')
    assert run_cli("run", "ring", "--target", "fake", "--builds", str(tmp_path / "builds.toml"), "--no-build") == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "build 1.env" in err[0], err


# ---------------------------------------------------------------- YAML aliases


def merge_bomb(levels: int, width: int = 7) -> str:
    """Each level merges the one below `width` times: PyYAML's merge flattening copies
    each, so the work grows width-fold per level from a file of a few hundred bytes."""
    lines = ["l0: &l0 {a: 1, b: 2}"]
    for level in range(1, levels + 1):
        lines.append(f"l{level}: &l{level} {{<<: [{', '.join([f'*l{level - 1}'] * width)}]}}")
    lines.append(f"all:\n  hosts:\n    h1: *l{levels}")
    return "\n".join(lines) + "\n"


def load_in_a_child(path, timeout_s: float) -> subprocess.CompletedProcess:
    """load_inventory in a process of its own, so that a loader that would run for hours
    fails the test at timeout_s instead of hanging it."""
    code = ("import sys; from msgbench.hosts import inventory as hosts\n"
            "try:\n    hosts.load_inventory(sys.argv[1])\nexcept hosts.HostError as e:\n    print(e)\n")
    return subprocess.run([sys.executable, "-c", code, str(path)], cwd=REPO_ROOT, capture_output=True,
                          text=True, timeout=timeout_s)


def test_an_alias_bomb_is_refused_early(tmp_path):
    path = tmp_path / "inventory.yml"
    path.write_text(merge_bomb(12))
    assert len(path.read_bytes()) < 1024
    proc = load_in_a_child(path, timeout_s=60)  # generous: the refusal reads a kilobyte once
    assert proc.returncode == 0, proc.stderr
    assert "aliases expand to more than 100,000 values" in proc.stdout and str(path) in proc.stdout


def test_aliases_nested_too_deep_are_refused(tmp_path):
    path = tmp_path / "inventory.yml"
    path.write_text("all: " + "[" * 2000 + "]" * 2000 + "\n")
    with pytest.raises(hosts.HostError) as caught:
        hosts.load_inventory(path)
    one_line(caught.value, str(path), "nests deeper than 32 levels")


def test_a_self_referencing_alias_is_refused(tmp_path):
    path = tmp_path / "inventory.yml"
    path.write_text("all: &top\n  children:\n    again: *top\n")
    with pytest.raises(hosts.HostError) as caught:
        hosts.load_inventory(path)
    one_line(caught.value, str(path), "refers to a node that contains it")


def test_an_inventory_with_an_ordinary_merge_key_still_loads(tmp_path):
    path = tmp_path / "inventory.yml"
    path.write_text("defaults: &d {ansible_user: bench, ansible_port: 2222}\n"
                    "all:\n  hosts:\n    h1:\n      <<: *d\n      ansible_host: 10.0.0.5\n    h2: *d\n")
    inv = hosts.load_inventory(path)
    assert inv.hosts["h1"].options == ["-o", "HostName=10.0.0.5", "-l", "bench", "-p", "2222"]
    assert inv.hosts["h2"].options == ["-l", "bench", "-p", "2222"]


def test_a_remote_host_starting_with_a_dash_never_reaches_ssh(fake_targets, capsys):
    assert run_cli("run", "socket", "--target", "fake", "-p", "placement=remote",
                   "--remote=-V", "--no-build") == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "not starting with '-'" in err[0], err
