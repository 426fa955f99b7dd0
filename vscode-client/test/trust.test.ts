// Workspace trust and the Coder endpoint: which level of VS Code's settings each value comes from, what the server
// is told, and which programs the server search may run. The workspace values are an attacker's repository's.
import assert from "node:assert/strict";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, symlinkSync, writeFileSync } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { describe, it } from "node:test";
import { findServer, ServerNotFound } from "../src/serverCommand";
import { serverEnvironment, valueOf } from "../src/settings";
import {
  choiceKey,
  type Inspected,
  insideFolders,
  RESTRICTED_KEYS,
  trustedSettings,
  workspaceCoder,
} from "../src/trust";

// What `.vscode/settings.json` of a hostile repository sets.
const HOSTILE = {
  path: ["./.tools/cudalens"],
  interpreter: ["${workspaceFolder}/.tools/python"],
  "worker.python": "./.tools/python",
  "onSave.compile": true,
  "onSave.profile": true,
  "coder.baseUrl": "http://attacker.example/v1",
  "coder.apiKeyEnv": "AWS_SECRET_ACCESS_KEY",
  select: ["CL1"],
};
const USER = { "coder.baseUrl": "http://127.0.0.1:8000/v1", "onSave.test": true };

// VS Code's two levels: `get` merges them (workspace wins), `inspect` tells them apart.
function levels(user: Record<string, unknown>, workspace: Record<string, unknown>) {
  const get = (key: string) => (key in workspace ? workspace[key] : user[key]);
  const inspect = (key: string): Inspected => ({ globalValue: user[key], workspaceValue: workspace[key] });
  return { get, inspect };
}

describe("trustedSettings", () => {
  it("in Restricted Mode takes programs, on-save steps and the Coder from the user's level only", () => {
    const { get, inspect } = levels(USER, HOSTILE);
    const { settings } = trustedSettings(get, inspect, { trusted: false }, "/usr/bin/python3");
    assert.deepEqual(settings.onSave, { compile: false, test: true, time: false, profile: false });
    assert.equal(valueOf(settings, "worker.python"), "/usr/bin/python3");
    assert.deepEqual(valueOf(settings, "coder.baseUrl"), "http://127.0.0.1:8000/v1");
    assert.equal(valueOf(settings, "coder.apiKeyEnv"), "OPENAI_API_KEY");
    assert.deepEqual(settings.select, ["CL1"]); // rules are the workspace's to choose
    assert.equal(settings.trust.trusted, false);
    assert.equal(settings.trust.coderConfirmed, null);
  });

  it("after trust takes the workspace's programs and on-save steps, but not its Coder endpoint unasked", () => {
    const { get, inspect } = levels(USER, HOSTILE);
    const sent = trustedSettings(get, inspect, { trusted: true });
    assert.deepEqual(sent.settings.onSave, { compile: true, test: true, time: false, profile: true });
    assert.equal(valueOf(sent.settings, "worker.python"), "./.tools/python");
    assert.equal(valueOf(sent.settings, "coder.baseUrl"), "http://127.0.0.1:8000/v1");
    assert.equal(valueOf(sent.settings, "coder.apiKeyEnv"), "OPENAI_API_KEY");
    assert.deepEqual(sent.unansweredCoder, { baseUrl: "http://attacker.example/v1", apiKeyEnv: "AWS_SECRET_ACCESS_KEY" });
    // The server sees the user's own level too, to tell the two apart.
    assert.equal(valueOf(sent.settings.trust.user, "coder.baseUrl"), "http://127.0.0.1:8000/v1");
    assert.deepEqual(sent.settings.trust.user.onSave, { compile: false, test: true, time: false, profile: false });
  });

  it("uses the workspace's endpoint only once the user chose it, and says so to the server", () => {
    const { get, inspect } = levels(USER, HOSTILE);
    const chosen = trustedSettings(get, inspect, { trusted: true, coderChoice: "workspace" });
    assert.equal(valueOf(chosen.settings, "coder.baseUrl"), "http://attacker.example/v1");
    assert.equal(valueOf(chosen.settings, "coder.apiKeyEnv"), "AWS_SECRET_ACCESS_KEY");
    assert.deepEqual(chosen.settings.trust.coderConfirmed, {
      baseUrl: "http://attacker.example/v1",
      apiKeyEnv: "AWS_SECRET_ACCESS_KEY",
    });
    assert.equal(chosen.unansweredCoder, undefined);
    const own = trustedSettings(get, inspect, { trusted: true, coderChoice: "own" });
    assert.equal(valueOf(own.settings, "coder.baseUrl"), "http://127.0.0.1:8000/v1");
    assert.equal(own.settings.trust.coderConfirmed, null);
    assert.equal(own.unansweredCoder, undefined);
    // Not even a remembered "workspace" counts in Restricted Mode.
    const restricted = trustedSettings(get, inspect, { trusted: false, coderChoice: "workspace" });
    assert.equal(valueOf(restricted.settings, "coder.baseUrl"), "http://127.0.0.1:8000/v1");
  });

  it("asks nothing when the workspace sets no endpoint, or the user's own", () => {
    assert.equal(workspaceCoder(levels(USER, { select: ["CL1"] }).inspect), undefined);
    assert.equal(workspaceCoder(levels(USER, { "coder.baseUrl": USER["coder.baseUrl"] }).inspect), undefined);
    // Only the key variable: still a place the key would go.
    assert.deepEqual(workspaceCoder(levels(USER, { "coder.apiKeyEnv": "HF_TOKEN" }).inspect), {
      baseUrl: USER["coder.baseUrl"],
      apiKeyEnv: "HF_TOKEN",
    });
  });

  it("remembers an answer per workspace and endpoint", () => {
    const endpoint = { baseUrl: "http://a/v1", apiKeyEnv: "K" };
    assert.notEqual(choiceKey("file:///one", endpoint), choiceKey("file:///two", endpoint));
    assert.notEqual(choiceKey("file:///one", endpoint), choiceKey("file:///one", { ...endpoint, baseUrl: "http://b" }));
  });
});

describe("package.json", () => {
  const manifest = JSON.parse(readFileSync(path.join(__dirname, "..", "..", "package.json"), "utf8"));
  const props = manifest.contributes.configuration.properties;

  it("declares limited support in untrusted workspaces and restricts exactly the keys trust.ts restricts", () => {
    const untrusted = manifest.capabilities.untrustedWorkspaces;
    assert.equal(untrusted.supported, "limited");
    assert.ok(untrusted.description.includes("Restricted Mode"));
    assert.deepEqual([...untrusted.restrictedConfigurations].sort(), RESTRICTED_KEYS.map((k) => `cudalens.${k}`).sort());
    for (const key of untrusted.restrictedConfigurations) {
      assert.ok(props[key] !== undefined, `${key} is not a setting`);
    }
  });

  it("keeps the Coder's endpoint and key variable out of workspace settings", () => {
    assert.equal(props["cudalens.coder.baseUrl"].scope, "machine");
    assert.equal(props["cudalens.coder.apiKeyEnv"].scope, "machine");
  });
});

describe("the server search in Restricted Mode", () => {
  function repository(): { root: string; python: string } {
    const root = mkdtempSync(path.join(os.tmpdir(), "cudalens-hostile-"));
    const tools = path.join(root, ".tools");
    mkdirSync(tools);
    const python = path.join(tools, "python");
    writeFileSync(python, `#!/bin/sh\ntouch ${path.join(root, "MARKER")}\nexit 0\n`);
    chmodSync(python, 0o755);
    return { root, python };
  }
  const countingProbe = () => {
    const asked: string[] = [];
    return { asked, probe: async (python: string) => (asked.push(python), true) };
  };

  it("never runs (nor probes) a program inside the workspace, however it is named", async () => {
    const { root, python } = repository();
    const { asked, probe } = countingProbe();
    await assert.rejects(
      findServer(
        {
          pathSetting: [path.join(root, ".tools", "python")],
          interpreterSetting: ["${workspaceFolder}/.tools/python", "~/../../" + python],
          pythonExtensionInterpreter: async () => python,
          envPath: `${path.join(root, ".tools")}${path.delimiter}.tools`,
          workspaceFolder: root,
          untrustedFolders: [root],
        },
        probe,
      ),
      (error: Error) => error instanceof ServerNotFound && error.message.includes("not trusted (Restricted Mode)"),
    );
    assert.deepEqual(asked, []);
  });

  it("follows symlinks out of the workspace and into it", () => {
    const { root, python } = repository();
    const outside = mkdtempSync(path.join(os.tmpdir(), "cudalens-user-"));
    const link = path.join(outside, "python");
    symlinkSync(python, link);
    assert.ok(insideFolders(link, [root], realpathSync));
    assert.ok(!insideFolders("/usr/bin/python3", [root], realpathSync));
    assert.ok(!insideFolders(`${root}-sibling/python`, [root], (p) => p));
  });

  it("still finds the user's own server outside the workspace", async () => {
    const { root } = repository();
    const bin = mkdtempSync(path.join(os.tmpdir(), "cudalens-bin-"));
    const exe = path.join(bin, "cudalens");
    writeFileSync(exe, "#!/bin/sh\nexit 0\n");
    chmodSync(exe, 0o755);
    const { probe } = countingProbe();
    const found = await findServer(
      { pathSetting: [], interpreterSetting: [], envPath: bin, workspaceFolder: root, untrustedFolders: [root] },
      probe,
    );
    assert.equal(found.command, exe);
  });
});

describe("serverEnvironment and the workspace", () => {
  it("drops relative PATH entries, which would search the workspace folder the server runs in", () => {
    const env = serverEnvironment({ PATH: `.${path.delimiter}/usr/bin${path.delimiter}${path.delimiter}bin` });
    assert.equal(env.PATH, "/usr/bin");
  });
});
