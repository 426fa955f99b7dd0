// The settings mapping: VS Code's flat `cudalens.*` keys → the server's nested settings object.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { DEFAULT_SETTINGS, mapSettings, serverEnvironment } from "../src/settings";

const from = (values: Record<string, unknown>) => (key: string) => values[key];

describe("mapSettings", () => {
  it("gives the server's defaults when nothing is set", () => {
    const { settings, problems } = mapSettings(from({}));
    assert.deepEqual(settings, DEFAULT_SETTINGS);
    assert.deepEqual(problems, []);
  });

  it("nests every shared setting the way the server reads it", () => {
    const { settings, problems } = mapSettings(
      from({
        select: ["CL1", " CL301 ", ""],
        ignore: ["CL5"],
        arch: "sm_90",
        "onSave.compile": false,
        "onSave.test": true,
        "onSave.time": true,
        "onSave.profile": true,
        "worker.python": "/opt/torch/bin/python",
        "worker.timeoutSeconds": 120,
        "coder.baseUrl": "http://127.0.0.1:8000/v1",
        "coder.model": "o3",
        "coder.apiKeyEnv": "MY_KEY",
        "coder.temperature": 0.2,
        "coder.reasoningEffort": "high",
        "coder.timeoutSeconds": 30,
        "coder.retries": 0,
        "optimize.rounds": 3,
        "optimize.budgetUsd": 0.5,
        logLevel: "debug",
      }),
    );
    assert.deepEqual(problems, []);
    assert.deepEqual(settings, {
      select: ["CL1", "CL301"],
      ignore: ["CL5"],
      arch: "sm_90",
      onSave: { compile: false, test: true, time: true, profile: true },
      worker: { python: "/opt/torch/bin/python", timeoutSeconds: 120 },
      coder: {
        baseUrl: "http://127.0.0.1:8000/v1",
        model: "o3",
        apiKeyEnv: "MY_KEY",
        temperature: 0.2,
        reasoningEffort: "high",
        timeoutSeconds: 30,
        retries: 0,
      },
      optimize: { rounds: 3, budgetUsd: 0.5 },
      logLevel: "debug",
    });
  });

  it("turns VS Code's empty defaults into null, so the server's defaults and [tool.cudalens] apply", () => {
    const { settings } = mapSettings(
      from({
        select: [],
        ignore: [" "],
        arch: "",
        "coder.baseUrl": " ",
        "coder.model": "",
        "coder.reasoningEffort": "",
        "worker.python": "",
      }),
    );
    assert.equal(settings.select, null);
    assert.equal(settings.ignore, null);
    assert.equal(settings.arch, null);
    assert.equal(settings.coder.baseUrl, null);
    assert.equal(settings.coder.model, null);
    assert.equal(settings.coder.reasoningEffort, null);
    assert.equal(settings.worker.python, null);
  });

  it("fills worker.python from the server's interpreter only when unset", () => {
    assert.equal(mapSettings(from({}), "/venv/bin/python").settings.worker.python, "/venv/bin/python");
    assert.equal(
      mapSettings(from({ "worker.python": "/other/python" }), "/venv/bin/python").settings.worker.python,
      "/other/python",
    );
  });

  it("keeps the default and says why for each setting of the wrong type", () => {
    const { settings, problems } = mapSettings(
      from({
        select: "CL1",
        "onSave.test": "yes",
        "optimize.rounds": 0,
        "coder.retries": 1.5,
        "worker.timeoutSeconds": -1,
        "optimize.budgetUsd": "1",
        logLevel: "loud",
      }),
    );
    assert.deepEqual(settings, DEFAULT_SETTINGS);
    assert.deepEqual(problems, [
      'cudalens.select should be a list of rule codes, not "CL1"; using the default.',
      'cudalens.onSave.test should be true or false, not "yes"; using the default.',
      "cudalens.worker.timeoutSeconds should be a positive number, not -1; using the default.",
      "cudalens.coder.retries should be a whole number ≥ 0, not 1.5; using the default.",
      "cudalens.optimize.rounds should be a whole number ≥ 1, not 0; using the default.",
      'cudalens.optimize.budgetUsd should be a number ≥ 0, not "1"; using the default.',
      'cudalens.logLevel should be one of error, warning, info, debug, not "loud"; using the default.',
    ]);
  });
});

describe("serverEnvironment", () => {
  it("passes the stored key under the configured name and CUDALENS_API_KEY", () => {
    const env = serverEnvironment({ PATH: "/bin", MY_KEY: "old", UNSET: undefined }, "MY_KEY", "sk-stored");
    assert.deepEqual(env, { PATH: "/bin", MY_KEY: "sk-stored", CUDALENS_API_KEY: "sk-stored" });
  });

  it("keeps a key already in the environment when none is stored", () => {
    const env = serverEnvironment({ OPENAI_API_KEY: "sk-env" }, "OPENAI_API_KEY", undefined);
    assert.deepEqual(env, { OPENAI_API_KEY: "sk-env" });
    assert.deepEqual(serverEnvironment({}, "OPENAI_API_KEY", ""), {});
  });
});
