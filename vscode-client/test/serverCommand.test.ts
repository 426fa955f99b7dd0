// Finding the server: real files, real PATH search, and real interpreters for the import probe
// (CUDALENS_TEST_PYTHON has cudalens — the pytest wrapper passes its own interpreter; /usr/bin/python3 has not).
import assert from "node:assert/strict";
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { describe, it } from "node:test";
import {
  type CudalensProbe,
  expandVariables,
  findServer,
  importsCudalens,
  isExecutableFile,
  ServerNotFound,
  venvFolders,
  whichOnPath,
} from "../src/serverCommand";

const withCudalens = process.env.CUDALENS_TEST_PYTHON;
const withoutCudalens = "/usr/bin/python3";

function scratch(): string {
  return mkdtempSync(path.join(os.tmpdir(), "cudalens-client-"));
}

function executable(dir: string, name: string): string {
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, name);
  writeFileSync(file, "#!/bin/sh\nexit 0\n");
  chmodSync(file, 0o755);
  return file;
}

// Counts how often the real probe ran, to show which interpreters were asked.
function countingProbe(): { probe: CudalensProbe; asked: string[] } {
  const asked: string[] = [];
  return {
    asked,
    probe: (python) => {
      asked.push(python);
      return importsCudalens(python);
    },
  };
}

const empty = { pathSetting: [], interpreterSetting: [] };

describe("findServer", () => {
  it("uses the first existing executable of cudalens.path and runs `serve`", async () => {
    const dir = scratch();
    const exe = executable(dir, "cudalens");
    const { probe, asked } = countingProbe();
    const found = await findServer({ ...empty, pathSetting: [path.join(dir, "missing"), exe] }, probe);
    assert.deepEqual(found, { command: exe, args: ["serve"], source: "cudalens.path" });
    assert.deepEqual(asked, []);
  });

  it("expands ${workspaceFolder} in cudalens.path", async () => {
    const dir = scratch();
    const exe = executable(path.join(dir, "bin"), "cudalens");
    const found = await findServer(
      { ...empty, pathSetting: ["${workspaceFolder}/bin/cudalens"], workspaceFolder: dir },
      importsCudalens,
    );
    assert.equal(found.command, exe);
  });

  it("says which cudalens.path entries are missing instead of falling back", async () => {
    const dir = scratch();
    executable(path.join(dir, "bin"), "cudalens");
    await assert.rejects(
      findServer({ ...empty, pathSetting: ["/nonexistent/cudalens"], envPath: path.join(dir, "bin") }, importsCudalens),
      (error: Error) =>
        error instanceof ServerNotFound &&
        error.message.includes('cudalens.path is set to "/nonexistent/cudalens"') &&
        error.message.includes("none of these is an executable file"),
    );
  });

  it("cudalens.path wins over cudalens.interpreter", async () => {
    const exe = executable(scratch(), "cudalens");
    const found = await findServer({ pathSetting: [exe], interpreterSetting: ["/usr/bin/python3"] }, importsCudalens);
    assert.equal(found.source, "cudalens.path");
  });

  it("runs `python -m cudalens serve` with cudalens.interpreter when it imports cudalens", { skip: !withCudalens && "CUDALENS_TEST_PYTHON not set" }, async () => {
    const python = withCudalens as string;
    const found = await findServer({ ...empty, interpreterSetting: [python] }, importsCudalens);
    assert.deepEqual(found, {
      command: python,
      args: ["-m", "cudalens", "serve"],
      source: "cudalens.interpreter",
      python,
    });
  });

  it("tells how to install cudalens into a cudalens.interpreter that lacks it", { skip: !isExecutableFile(withoutCudalens) && "no /usr/bin/python3" }, async () => {
    await assert.rejects(
      findServer({ ...empty, interpreterSetting: [withoutCudalens] }, importsCudalens),
      (error: Error) =>
        error instanceof ServerNotFound &&
        error.message.includes(`\`${withoutCudalens} -m pip install -e <clone>\``) &&
        !error.message.includes("pip install cudalens"), // it is on no package index
    );
  });

  it("uses the Python extension's interpreter when it has cudalens", { skip: !withCudalens && "CUDALENS_TEST_PYTHON not set" }, async () => {
    const python = withCudalens as string;
    const found = await findServer({ ...empty, pythonExtensionInterpreter: async () => python, envPath: "" }, importsCudalens);
    assert.equal(found.source, "python-extension");
    assert.deepEqual(found.args, ["-m", "cudalens", "serve"]);
    assert.equal(found.python, python);
  });

  it("falls back to PATH when the selected interpreter lacks cudalens", async () => {
    const bin = path.join(scratch(), "bin");
    const exe = executable(bin, "cudalens");
    const { probe, asked } = countingProbe();
    const found = await findServer({ ...empty, pythonExtensionInterpreter: async () => withoutCudalens, envPath: bin }, probe);
    assert.deepEqual(found, { command: exe, args: ["serve"], source: "PATH" });
    assert.deepEqual(asked, isExecutableFile(withoutCudalens) ? [withoutCudalens] : []);
  });

  it("fails with the fix when nothing works", async () => {
    await assert.rejects(
      findServer({ ...empty, pythonExtensionInterpreter: async () => "/nonexistent/python", envPath: scratch() }, importsCudalens),
      (error: Error) =>
        error instanceof ServerNotFound &&
        error.message.includes("the selected Python environment (/nonexistent/python) cannot import cudalens") &&
        error.message.includes("no `cudalens` executable on PATH") &&
        error.message.includes("`make setup` makes `<clone>/.venv/bin/cudalens`") &&
        error.message.includes("Remote tab") &&
        error.message.includes("cudalens.path"),
    );
  });

  it("finds the folder's .venv/bin/cudalens after the settings and before the Python extension and PATH", async () => {
    const folder = scratch();
    const venv = executable(path.join(folder, ".venv", "bin"), "cudalens");
    const python = executable(path.join(folder, ".venv", "bin"), "python");
    const onPath = executable(path.join(scratch(), "bin"), "cudalens");
    const { probe, asked } = countingProbe();
    let askedExtension = 0; // asking the Python extension activates it: seconds in a new window
    const selected = async () => (askedExtension++, "/usr/bin/python3");
    const search = { ...empty, workspaceFolder: folder, pythonExtensionInterpreter: selected, envPath: path.dirname(onPath) };
    assert.deepEqual(await findServer(search, probe), { command: venv, args: ["serve"], source: ".venv", python });
    assert.deepEqual(asked, []); // found before the selected interpreter was probed
    assert.equal(askedExtension, 0); // nor was the Python extension asked for it
    const explicit = executable(scratch(), "cudalens");
    assert.equal((await findServer({ ...search, pathSetting: [explicit] }, probe)).command, explicit);
  });

  it("says it looked in the folder's .venv when nothing works", async () => {
    const folder = scratch();
    await assert.rejects(
      findServer({ ...empty, workspaceFolder: folder, envPath: scratch() }, importsCudalens),
      (error: Error) => error instanceof ServerNotFound && error.message.includes(`no .venv/bin/cudalens in ${folder}`),
    );
  });

  it("finds the clone's .venv from a subfolder, up to the repository's root and no further", async () => {
    const outside = scratch();
    executable(path.join(outside, ".venv", "bin"), "cudalens"); // above the repository: not looked at
    const clone = path.join(outside, "cudalens");
    mkdirSync(path.join(clone, ".git"), { recursive: true });
    const venv = executable(path.join(clone, ".venv", "bin"), "cudalens");
    const sub = path.join(clone, "examples", "kernels");
    mkdirSync(sub, { recursive: true });
    const found = await findServer({ ...empty, workspaceFolder: sub, envPath: "" }, importsCudalens);
    assert.deepEqual(found, { command: venv, args: ["serve"], source: ".venv", python: undefined });
    assert.deepEqual(venvFolders(sub), [sub, path.dirname(sub), clone]);
    rmSync(path.join(clone, ".venv"), { recursive: true });
    await assert.rejects(
      findServer({ ...empty, workspaceFolder: sub, envPath: scratch() }, importsCudalens),
      (error: Error) =>
        error instanceof ServerNotFound && error.message.includes(`no .venv/bin/cudalens in ${sub} or above it up to ${clone}`),
    );
  });

  it("looks in no folder above one that is in no repository", () => {
    const folder = path.join(scratch(), "not-a-clone");
    mkdirSync(folder);
    assert.deepEqual(venvFolders(folder), [folder]);
  });

  it("never runs the clone's .venv above an untrusted subfolder", async () => {
    const clone = scratch();
    mkdirSync(path.join(clone, ".git"));
    const venv = executable(path.join(clone, ".venv", "bin"), "cudalens");
    const sub = path.join(clone, "kernels");
    mkdirSync(sub);
    const onPath = executable(path.join(scratch(), "bin"), "cudalens");
    const { probe, asked } = countingProbe();
    const found = await findServer({ ...empty, workspaceFolder: sub, untrustedFolders: [sub], envPath: path.dirname(onPath) }, probe);
    assert.deepEqual(found, { command: onPath, args: ["serve"], source: "PATH" });
    assert.deepEqual(asked, []);
    await assert.rejects(
      findServer({ ...empty, workspaceFolder: sub, untrustedFolders: [sub], envPath: "" }, probe),
      (error: Error) => error.message.includes(`${venv} is in this workspace's repository, which is not trusted`),
    );
  });

  it("never runs the folder's .venv in Restricted Mode", async () => {
    const folder = scratch();
    executable(path.join(folder, ".venv", "bin"), "cudalens");
    const onPath = executable(path.join(scratch(), "bin"), "cudalens");
    const found = await findServer(
      { ...empty, workspaceFolder: folder, untrustedFolders: [folder], envPath: path.dirname(onPath) },
      importsCudalens,
    );
    assert.deepEqual(found, { command: onPath, args: ["serve"], source: "PATH" });
  });
});

describe("path helpers", () => {
  it("finds only executable files on PATH", () => {
    const dir = scratch();
    const notExecutable = path.join(dir, "plain", "cudalens");
    mkdirSync(path.dirname(notExecutable));
    writeFileSync(notExecutable, "");
    mkdirSync(path.join(dir, "folder", "cudalens"), { recursive: true });
    const exe = executable(path.join(dir, "real"), "cudalens");
    const envPath = ["", path.dirname(notExecutable), path.join(dir, "folder"), path.dirname(exe)].join(path.delimiter);
    assert.equal(whichOnPath("cudalens", envPath), exe);
    assert.equal(whichOnPath("cudalens", path.dirname(notExecutable)), undefined);
    assert.equal(whichOnPath("cudalens", undefined), undefined);
  });

  it("expands ~ and ${userHome}, and leaves ${workspaceFolder} alone without a folder", () => {
    assert.equal(expandVariables(" ~/bin/cudalens ", undefined), path.join(os.homedir(), "bin/cudalens"));
    assert.equal(expandVariables("${userHome}/x", undefined), `${os.homedir()}/x`);
    assert.equal(expandVariables("${workspaceFolder}/x", undefined), "${workspaceFolder}/x");
  });
});
