// The settings mapping: VS Code's flat `cudalens.*` keys → the server's nested settings object. The keys and
// defaults are package.json's (generated from the server's schema); the server checks the values.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import * as path from "node:path";
import { describe, it } from "node:test";
import {
  apiKeyEnvOf,
  defaultOf,
  EXTENSION_KEYS,
  mapSettings,
  SERVER_KEYS,
  serverEnvironment,
  storedKeyMessage,
  valueOf,
} from "../src/settings";

const from = (values: Record<string, unknown>) => (key: string) => values[key];
const manifest = JSON.parse(readFileSync(path.join(__dirname, "..", "..", "package.json"), "utf8"));

describe("mapSettings", () => {
  it("sends every setting of package.json but the extension's own, nested, with package.json's defaults", () => {
    const keys = Object.keys(manifest.contributes.configuration.properties).map((k) => k.slice("cudalens.".length));
    assert.deepEqual([...SERVER_KEYS, ...EXTENSION_KEYS].sort(), keys.sort());
    const { settings } = mapSettings(from({}));
    for (const key of SERVER_KEYS) {
      const expected = defaultOf(key);
      const empty = expected === "" || (Array.isArray(expected) && expected.length === 0);
      assert.deepEqual(valueOf(settings, key), empty ? null : expected, key);
    }
    assert.equal(valueOf(settings, "path"), undefined);
    assert.equal(valueOf(settings, "trace.server"), undefined);
    assert.equal(valueOf(settings, "coder.priceInPer1k"), 0);
    assert.equal(valueOf(settings, "optimize.allowTorchOps"), false);
  });

  it("nests the values the way the server reads them", () => {
    const { settings } = mapSettings(
      from({
        select: ["CL1", " CL301 ", ""],
        "onSave.test": true,
        "worker.python": "/opt/torch/bin/python",
        "coder.baseUrl": "http://127.0.0.1:8000/v1",
        "coder.priceOutPer1k": 0.008,
        "optimize.rounds": 3,
        debounceMs: 40,
      }),
    );
    assert.deepEqual(settings.select, ["CL1", "CL301"]);
    assert.deepEqual(settings.onSave, { compile: false, test: true, time: false, profile: false });
    assert.equal(valueOf(settings, "worker.python"), "/opt/torch/bin/python");
    assert.equal(valueOf(settings, "coder.baseUrl"), "http://127.0.0.1:8000/v1");
    assert.equal(valueOf(settings, "coder.priceOutPer1k"), 0.008);
    assert.equal(valueOf(settings, "optimize.rounds"), 3);
    assert.equal(settings.debounceMs, 40);
  });

  it("turns VS Code's empty values into null, so the server's defaults and [tool.cudalens] apply", () => {
    const { settings } = mapSettings(
      from({ select: [], ignore: [" "], arch: "", "coder.baseUrl": " ", "coder.reasoningEffort": "", logLevel: "" }),
    );
    for (const key of ["select", "ignore", "arch", "coder.baseUrl", "coder.reasoningEffort", "logLevel"]) {
      assert.equal(valueOf(settings, key), null, key);
    }
  });

  it("fills worker.python from the server's interpreter only when unset", () => {
    assert.equal(valueOf(mapSettings(from({}), "/venv/bin/python").settings, "worker.python"), "/venv/bin/python");
    const set = mapSettings(from({ "worker.python": "/other/python" }), "/venv/bin/python").settings;
    assert.equal(valueOf(set, "worker.python"), "/other/python");
  });

  it("passes a wrong value on as it is: the server checks it and says why", () => {
    const { settings } = mapSettings(from({ "onSave.test": "yes", "optimize.rounds": 0 }));
    assert.equal(valueOf(settings, "onSave.test"), "yes");
    assert.equal(valueOf(settings, "optimize.rounds"), 0);
  });

  it("gives the key to the server only under a variable name", () => {
    assert.equal(apiKeyEnvOf(mapSettings(from({ "coder.apiKeyEnv": "MY_KEY" })).settings), "MY_KEY");
    assert.equal(apiKeyEnvOf(mapSettings(from({ "coder.apiKeyEnv": "A=B" })).settings), "OPENAI_API_KEY");
    assert.equal(apiKeyEnvOf(mapSettings(from({ "coder.apiKeyEnv": 5 })).settings), "OPENAI_API_KEY");
  });
});

describe("the key's way into the server", () => {
  it("passes the stored key under the configured name and CUDALENS_API_KEY, through the pipe", () => {
    assert.deepEqual(JSON.parse(storedKeyMessage("MY_KEY", "sk-stored")), { MY_KEY: "sk-stored", CUDALENS_API_KEY: "sk-stored" });
    const env = serverEnvironment({ PATH: "/bin", MY_KEY: "old", UNSET: undefined });
    assert.deepEqual(env, { PATH: "/bin", MY_KEY: "old", CUDALENS_SECRETS_FD: "3" });
  });

  it("sends nothing when none is stored, and keeps a key already in the environment", () => {
    assert.equal(storedKeyMessage("OPENAI_API_KEY", undefined), "");
    assert.equal(storedKeyMessage("OPENAI_API_KEY", ""), "");
    assert.deepEqual(serverEnvironment({ OPENAI_API_KEY: "sk-env" }), { OPENAI_API_KEY: "sk-env", CUDALENS_SECRETS_FD: "3" });
  });
});
