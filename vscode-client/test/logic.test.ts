// The restart back-off, the kernel choice, the status bar text and the command replies.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { bodyEndLine, chooseKernel, kernelFromLensArguments, kernelMarksInText, withExtents } from "../src/kernels";
import { parseProposal, withProposalCapability } from "../src/proposal";
import { RestartPolicy, StepQueue } from "../src/restartPolicy";
import { describeStatus, parseStatus } from "../src/status";

describe("StepQueue", () => {
  it("runs steps in order, and merges restarts asked for before the waiting one begins", async () => {
    const queue = new StepQueue();
    const done: string[] = [];
    const starting = gate();
    const first = queue.run(async () => {
      await starting.promise;
      done.push("start");
    });
    // trusting a workspace: the trust event and the settings change, in one tick, while the start still runs
    const byTrust = queue.restart(async () => {
      done.push("restart");
    });
    const bySettings = queue.restart(async () => {
      done.push("restart (settings)");
    });
    assert.equal(byTrust, bySettings);
    starting.open();
    await Promise.all([first, byTrust]);
    assert.deepEqual(done, ["start", "restart"]);
  });

  it("makes a restart asked for once the waiting one has begun a restart of its own", async () => {
    const queue = new StepQueue();
    const done: string[] = [];
    const begun = gate();
    const finishing = gate();
    const running = queue.restart(async () => {
      begun.open();
      await finishing.promise;
      done.push("first");
    });
    await begun.promise;
    const later = queue.restart(async () => {
      done.push("later"); // the settings the first one read may be stale by now
    });
    assert.notEqual(running, later);
    finishing.open();
    await queue.settled();
    assert.deepEqual(done, ["first", "later"]);
  });
});

function gate(): { promise: Promise<void>; open: () => void } {
  let open: () => void = () => undefined;
  const promise = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { promise, open };
}

describe("RestartPolicy", () => {
  it("doubles the delay per crash, caps it, and gives up at five crashes in the window", () => {
    const policy = new RestartPolicy(5, 180_000, 1_000, 4_000);
    const decisions = [0, 1, 2, 3, 4].map((i) => policy.onCrash(i * 10_000));
    assert.deepEqual(
      decisions.map((d) => [d.restart, d.delayMs]),
      [
        [true, 1_000],
        [true, 2_000],
        [true, 4_000],
        [true, 4_000],
        [false, 0],
      ],
    );
  });

  it("forgets crashes older than the window, and all of them on reset", () => {
    const policy = new RestartPolicy(3, 60_000);
    policy.onCrash(0);
    policy.onCrash(1_000);
    assert.deepEqual(policy.onCrash(60_500), { restart: true, delayMs: 2_000, crashesInWindow: 2 });
    policy.reset();
    assert.equal(policy.onCrash(61_000).crashesInWindow, 1);
  });
});

describe("chooseKernel", () => {
  const marks = [
    { name: "transpose", startLine: 3, endLine: 12 },
    { name: "scale", startLine: 20, endLine: 25 },
  ];

  it("takes the kernel whose extent holds the cursor", () => {
    assert.deepEqual(chooseKernel(marks, 7), { kernel: "transpose", choices: ["transpose", "scale"] });
    assert.equal(chooseKernel(marks, 25).kernel, "scale");
  });

  it("asks, nearest kernel above first, when the cursor is outside every kernel", () => {
    assert.deepEqual(chooseKernel(marks, 15), { choices: ["transpose", "scale"] });
    assert.deepEqual(chooseKernel(marks, 30), { choices: ["scale", "transpose"] });
  });

  it("needs no question when the file has one kernel", () => {
    assert.equal(chooseKernel([{ name: "only", startLine: 40 }], 0).kernel, "only");
  });

  it("reads kernel names from cudalens code lenses only", () => {
    assert.equal(kernelFromLensArguments("cudalens.optimizeKernel", ["file:///a.cu", "transpose"]), "transpose");
    assert.equal(kernelFromLensArguments("other.command", ["file:///a.cu", "transpose"]), undefined);
    assert.equal(kernelFromLensArguments("cudalens.runTests", ["file:///a.cu"]), undefined);
    assert.equal(kernelFromLensArguments("cudalens.runTests", ["file:///a.cu", 3]), undefined);
  });

  it("finds __global__ kernels in CUDA text and in Python strings", () => {
    const cuda = [
      "#include <cuda_runtime.h>",
      "__global__ void transpose(float *out, const float *in, int n) {}",
      "template <int B>",
      "__global__ void __launch_bounds__(256) scale_kernel(float* x) {}",
      "__device__ float helper(float x) { return x; }",
    ].join("\n");
    assert.deepEqual(kernelMarksInText(cuda), [
      { name: "transpose", startLine: 1 },
      { name: "scale_kernel", startLine: 3 },
    ]);
    const python = 'src = """\nextern "C" __global__\nvoid relu(float* x) {}\n"""\n';
    assert.deepEqual(kernelMarksInText(python), [{ name: "relu", startLine: 2 }]);
  });
});

describe("kernel extents", () => {
  const cuda = [
    "__global__ void a(float *x) {", // 0
    '    const char *s = "}";  // } in a comment', // 1
    "    /* { */ if (x) { x[0] = '}'; }", // 2
    "}", // 3
    "__global__ void declared(float *x);", // 4
    "__global__ void b(float *x)", // 5
    "{", // 6
    "    /* a", // 7
    "       } */", // 8
    "}", // 9
  ].join("\n");

  it("finds the closing brace, skipping braces in strings, characters and comments", () => {
    assert.equal(bodyEndLine(cuda, 0), 3);
    assert.equal(bodyEndLine(cuda, 5), 9);
  });

  it("gives no extent to a declaration or an unclosed body", () => {
    assert.equal(bodyEndLine(cuda, 4), undefined);
    assert.equal(bodyEndLine("__global__ void k() {\n  x();\n", 0), undefined);
  });

  it("lets the cursor inside a kernel pick it without asking", () => {
    const marks = withExtents(kernelMarksInText(cuda), cuda);
    assert.deepEqual(marks, [
      { name: "a", startLine: 0, endLine: 3 },
      { name: "declared", startLine: 4, endLine: undefined },
      { name: "b", startLine: 5, endLine: 9 },
    ]);
    assert.equal(chooseKernel(marks, 8).kernel, "b");
    assert.equal(chooseKernel(marks, 2).kernel, "a");
  });
});

describe("status bar", () => {
  it("shows the GPU, or that there is none", () => {
    const gpu = describeStatus("running", parseStatus({ gpu: "NVIDIA H200", busy: false }));
    assert.equal(gpu.text, "$(circuit-board) cudalens: NVIDIA H200");
    assert.equal(gpu.tooltip, "GPU: NVIDIA H200");
    const none = describeStatus("running", parseStatus({ gpu: null, busy: false, message: "nvidia-smi not found" }));
    assert.equal(none.text, "$(circuit-board) cudalens: no GPU");
    assert.equal(none.tooltip, "No GPU found: static hints and compile checks only.\nnvidia-smi not found");
  });

  it("spins while the server is busy", () => {
    const busy = describeStatus("running", parseStatus({ gpu: "H200", busy: true, message: "profiling transpose" }));
    assert.equal(busy.text, "$(sync~spin) cudalens: profiling transpose");
  });

  it("spins while one of the client's commands waits for the server", () => {
    const view = describeStatus("running", undefined, { activity: "Optimizing scale_rows" });
    assert.equal(view.text, "$(sync~spin) cudalens: Optimizing scale_rows");
    assert.equal(view.tooltip, "cudalens: static hints are on.\nOptimizing scale_rows");
    assert.equal(view.label, "cudalens running: cudalens: static hints are on.\nOptimizing scale_rows");
    assert.equal(describeStatus("running", undefined).text, "$(check) cudalens");
  });

  it("shows errors and ignores malformed notifications", () => {
    const view = describeStatus("error", undefined, { error: "cudalens was not found" });
    assert.deepEqual(view, {
      text: "$(error) cudalens",
      tooltip: "cudalens was not found",
      isError: true,
      label: "cudalens error: cudalens was not found",
    });
    assert.equal(parseStatus("busy"), undefined);
    assert.equal(parseStatus({ gpu: 3, busy: false }), undefined);
    assert.equal(parseStatus({ gpu: "H200", busy: "yes" }), undefined);
    assert.deepEqual(parseStatus({ gpu: "H200", extra: 1 }), { gpu: "H200", busy: false, message: undefined });
  });
});

describe("cudalens/showProposal", () => {
  it("takes the document, the proposal's id and text, and a title", () => {
    const params = { uri: "file:///w/k.cu", id: "cudalens-3", text: "new\n", title: "k.cu ↔ the Coder's suggestion" };
    assert.deepEqual(parseProposal(params), params);
    assert.equal(parseProposal({ ...params, title: undefined })?.title, "Coder's proposal");
    assert.equal(parseProposal({ ...params, text: 3 }), undefined);
    assert.equal(parseProposal({ ...params, id: "" }), undefined);
    assert.equal(parseProposal(null), undefined);
  });

  it("is declared under experimental.cudalens, beside what is there", () => {
    assert.deepEqual(withProposalCapability(undefined), { cudalens: { showProposal: true } });
    assert.deepEqual(withProposalCapability({ other: 1, cudalens: { more: true } }), {
      other: 1,
      cudalens: { more: true, showProposal: true },
    });
  });
});
