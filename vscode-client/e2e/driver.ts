// Drives a running code-server (a real VS Code in the browser) with playwright-core and Debian's chromium, the way
// a person would: open the CUDA file, read the Problems panel, apply a quick fix, run "cudalens: Optimize kernel".
// Usage: node out/e2e/driver.js CONFIG.json — writes result.json and screenshots into the config's artifacts
// folder. Assertions belong to the pytest test that starts it (tests/vscode/test_vscode_e2e.py); this script
// records what it saw, and exits non-zero only when the editor itself could not be driven.
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { chromium, type Frame, type Page } from "playwright-core";

interface DriverConfig {
  url: string;
  file: string;
  artifacts: string;
  // Text expected in the Problems panel before the driver moves on (rule codes).
  expectCodes: string[];
  // 1-based line and column of the finding whose quick fix is applied, and the title of that fix (a substring).
  quickFixLine: number;
  quickFixColumn: number;
  quickFixTitle: string;
  // A Python file with CUDA in a load_inline string, and a code expected in it.
  pythonFile: string;
  pythonCode: string;
  // The key typed into "cudalens: Set API key" (VS Code's secret storage → the server's environment).
  apiKey: string;
  // The file and 1-based line inside the kernel to optimize.
  optimizeFile: string;
  optimizeLine: number;
  // A notification matching this (a regular expression) ends the Optimize step: the run's last word.
  optimizeFinal: string;
  optimizeTimeoutMs: number;
  chromium: string;
  timeoutMs: number;
  // code-server's pid, which leads the session its extension host and our language server run in.
  session: number;
  // "restricted": an untrusted window — only open `file`, read the Problems panel, save, and run `runCommand`
  // (a kernel command), recording the answer; the rest of the walk is the trusted one's.
  // "notfound": no server anywhere — wait for the error, click its "Open settings", record where that lands.
  // "ask": after the Problems panel, "Ask Coder about this" on the finding at quickFixLine:quickFixColumn (its
  // quick fix titled quickFixTitle), then "Show diff", then "Apply", and save.
  // "everyday": a subfolder of a clone opened in Restricted Mode; trust it, read the lenses of `file`, then click
  // the "Find hot ops" lens of `modelFile` and watch its progress, its answer and the output.
  // "first": time a freshly loaded window: `file` opened as soon as the workbench shows, until its first
  // diagnostic is drawn (benchmarks/first_diagnostics.py --window); nothing else.
  mode?: "trusted" | "restricted" | "notfound" | "ask" | "everyday" | "first";
  // "first" with benchmarks/window_floor installed beside cudalens: also when its hint (a diagnostic that costs
  // nothing, set the moment the file opens) is drawn, in the same window
  floor?: boolean;
  modelFile?: string;
  runCommand?: string;
  // Then run "cudalens: Show report" on `file` and read the page inside its webview.
  showReport?: boolean;
  // The variable the stored key should reach the server process under (its /proc environ is read).
  apiKeyEnv?: string;
}

interface DriverResult {
  steps: string[];
  statusBar: string[];
  problems: string[];
  // The Problems panel once the Python file is open too (after the quick fix removed CL301).
  problemsWithPython: string[];
  quickFixes: string[];
  quickFixApplied: boolean;
  notifications: string[];
  // The command line of every language server the session ran (Restricted Mode: never the workspace's).
  servers?: string[];
  // The language server's pid before it was killed, and the pid of the one VS Code started in its place.
  killedServer?: number;
  restartedServer?: number;
  // What the report's webview showed: its section headings, the verdict table's rows, the SVGs drawn.
  report?: { headings: string[]; verdicts: string[]; svgs: number };
  // Whether the restarted server's environment block (/proc/<pid>/environ, which any process of the user can read)
  // holds neither the key typed into "Set API key" nor its variable `apiKeyEnv`: the key goes through the server's
  // own pipe (server/key_pipe.py; the test checks the server's word that it came, in the cudalens output).
  keyNotInEnvironment?: boolean;
  // "notfound": the setting the Settings editor shows after "Open settings".
  settingsShown?: string[];
  // "ask": the proposal's notification (the Coder's explanation in it) and its buttons, what "Show diff" opened
  // (the active tab's label, whether it is a diff editor, the text of its two sides) and whether the applied
  // proposal was saved.
  ask?: {
    notification: string;
    buttons: string[];
    diffTab: string;
    diffEditor: boolean;
    original: string;
    modified: string;
    saved: boolean;
  };
  // "everyday": the cudalens output's lines when the server runs after the trust, the code lenses' texts, the
  // status bar while "Find hot ops" ran (its progress), and the language servers started in the whole session.
  everyday?: {
    restrictedNotifications: string[];
    lenses: string[];
    progress: string[];
    serversStarted: number[];
  };
  // "first": milliseconds from the page's navigation to the workbench shown, to the Enter that opens `file` in
  // Quick Open, and to its first squiggle; and the language server's process start, from /proc, as milliseconds after the navigation.
  // navigatedAt: the navigation's epoch milliseconds, to line the timings up with VS Code's and cudalens's logs
  first?: {
    workbenchMs: number; openedMs: number; diagnosticsMs: number; serverStartedMs?: number; navigatedAt: number;
    floorMs?: number;
  };
  error?: string;
}

const config: DriverConfig = JSON.parse(readFileSync(process.argv[2], "utf8"));
const result: DriverResult = {
  steps: [],
  statusBar: [],
  problems: [],
  problemsWithPython: [],
  quickFixes: [],
  quickFixApplied: false,
  notifications: [],
};

function step(name: string): void {
  result.steps.push(name);
  console.log(`[driver] ${name}`);
}

function save(): void {
  writeFileSync(path.join(config.artifacts, "result.json"), JSON.stringify(result, null, 2));
}

async function runCommand(page: Page, title: string): Promise<void> {
  const input = page.locator(".quick-input-widget input");
  const row = page.locator(".quick-input-list .monaco-list-row", { hasText: title }).first();
  // A palette still closing from the last command takes the next one's keys (the row never shows): let it go
  // first, and when the row does not show, close the palette and ask again.
  for (let attempt = 1; ; attempt++) {
    await input.waitFor({ state: "hidden", timeout: 5_000 }).catch(() => undefined);
    await page.keyboard.press("F1");
    await input.waitFor({ state: "visible" });
    await input.fill(`>${title}`);
    const shown = await row.waitFor({ timeout: 15_000 }).then(() => true, () => false);
    if (shown || attempt === 3) {
      break;
    }
    await page.keyboard.press("Escape");
  }
  await row.waitFor();
  await page.keyboard.press("Enter");
}

async function goToLine(page: Page, line: number, column?: number): Promise<void> {
  await page.keyboard.press("Control+G");
  const input = page.locator(".quick-input-widget input");
  await input.waitFor({ state: "visible" });
  await input.fill(column === undefined ? `:${line}` : `:${line}:${column}`);
  await page.keyboard.press("Enter");
  await input.waitFor({ state: "hidden" });
}

async function openFile(page: Page, file: string): Promise<void> {
  await page.keyboard.press("Control+P");
  const input = page.locator(".quick-input-widget input");
  await input.waitFor({ state: "visible" });
  await input.fill(file);
  await page.locator(".quick-input-list .monaco-list-row", { hasText: file }).first().waitFor();
  await page.keyboard.press("Enter");
  await page.locator(`.tab.active[aria-label*="${file}"]`).first().waitFor();
  await page.locator(".monaco-editor .view-lines").first().click();
}

// `python -m cudalens serve` processes of code-server's session, read from /proc.
function serverPids(session: number): number[] {
  return serverProcesses(session).map(([pid]) => pid);
}

function serverProcesses(session: number): [number, string][] {
  const pids: [number, string][] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) {
      continue;
    }
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      const argv = readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0");
      const cudalens = argv.some((a) => a === "cudalens" || a.endsWith("/cudalens"));
      if (fields[0] !== "Z" && Number(fields[3]) === session && cudalens && argv.includes("serve")) {
        pids.push([Number(entry), argv.join(" ").trim()]);
      }
    } catch {
      // the process ended while we looked
    }
  }
  return pids;
}

async function waitFor<T>(what: string, probe: () => T | undefined): Promise<T> {
  const deadline = Date.now() + config.timeoutMs;
  for (;;) {
    const value = probe();
    if (value !== undefined) {
      return value;
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out waiting for ${what}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

async function texts(page: Page, selector: string): Promise<string[]> {
  return (await page.locator(selector).allInnerTexts()).map((t) => t.replace(/\s+/g, " ").trim()).filter(Boolean);
}

async function main(): Promise<void> {
  mkdirSync(config.artifacts, { recursive: true });
  const browser = await chromium.launch({
    executablePath: config.chromium,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  page.setDefaultTimeout(config.timeoutMs);
  try {
    step("open the workspace");
    const navigated = Date.now();
    await page.goto(config.url);
    await page.locator(".monaco-workbench").waitFor();
    if (config.mode === "first") {
      await firstDiagnostics(page, navigated);
      return;
    }
    if (config.mode === "notfound") {
      await notFoundWalk(page);
      return;
    }
    if (config.mode === "everyday") {
      await everydayWalk(page);
      return;
    }

    step(`open ${config.file}`);
    await page.locator(".monaco-workbench").click({ position: { x: 700, y: 400 } });
    await openFile(page, config.file);
    step("wait for the diagnostics in the Problems panel");
    await runCommand(page, "View: Focus Problems (Errors, Warnings, Infos)");
    const markers = ".markers-panel .monaco-list-row";
    for (const code of config.expectCodes) {
      await page.locator(markers, { hasText: code }).first().waitFor();
    }
    result.problems = await texts(page, markers);
    result.statusBar = await texts(page, ".statusbar-item");
    save();
    if (config.mode === "restricted") {
      await restrictedWalk(page);
      return;
    }
    if (config.mode === "ask") {
      await askWalk(page);
      return;
    }

    step("screenshot the editor with inline diagnostics and the hover of one");
    const squiggles = page.locator(".monaco-editor .squiggly-warning, .monaco-editor .squiggly-info");
    await squiggles.first().waitFor();
    await page.locator(".monaco-editor .view-lines").first().click();
    await goToLine(page, config.quickFixLine, config.quickFixColumn);
    await runCommand(page, "Show or Focus Hover");
    await page.locator(".monaco-hover", { hasText: config.expectCodes[config.expectCodes.length - 1] }).first().waitFor();
    await page.screenshot({ path: path.join(config.artifacts, "editor.png") });
    await page.keyboard.press("Escape");

    step("apply the quick fix");
    const actions = await openQuickFixes(page);
    result.quickFixes = await texts(page, ".action-widget .monaco-list-row");
    await actions.filter({ hasText: config.quickFixTitle }).first().click();
    await page.keyboard.press("Control+S");
    await page.locator(".tab.dirty").waitFor({ state: "detached" });
    result.quickFixApplied = true;
    save();

    step(`open ${config.pythonFile}: diagnostics inside its CUDA string`);
    await openFile(page, config.pythonFile);
    await runCommand(page, "View: Focus Problems (Errors, Warnings, Infos)");
    await page.locator(markers, { hasText: config.pythonFile }).first().waitFor();
    await page.locator(markers, { hasText: config.pythonCode }).first().waitFor();
    result.problemsWithPython = await texts(page, markers);
    save();

    step("store the API key with cudalens: Set API key");
    await runCommand(page, "cudalens: Set API key");
    const keyInput = page.locator(".quick-input-widget input[type=password]");
    await keyInput.waitFor({ state: "visible" });
    await keyInput.fill(config.apiKey);
    await page.keyboard.press("Enter");
    const toast = page.locator(".notification-toast .notification-list-item-message");
    await toast.filter({ hasText: "API key stored" }).first().waitFor();
    await page.keyboard.press("Escape");
    await runCommand(page, "Notifications: Clear All Notifications");

    step(`run cudalens: Optimize kernel in ${config.optimizeFile}`);
    const running = page.locator('[aria-label^="cudalens running"]');
    await running.first().waitFor(); // the server "Set API key" restarted
    await openFile(page, config.optimizeFile);
    await goToLine(page, config.optimizeLine);
    await runCommand(page, "cudalens: Optimize kernel");
    const final = toast.filter({ hasText: new RegExp(config.optimizeFinal) }).first();
    await final.waitFor({ timeout: config.optimizeTimeoutMs });
    result.notifications = await texts(page, ".notification-toast .notification-list-item-message");
    result.statusBar = await texts(page, ".statusbar-item");
    save();
    // The answer with the output under it: the server found in .venv, the reason given once.
    await runCommand(page, "cudalens: Show output");
    await page.locator(".part.panel .view-lines").first().waitFor();
    await showNewestNotification(page);
    await page.screenshot({ path: path.join(config.artifacts, "optimize.png") });
    await page.keyboard.press("Escape");
    await runCommand(page, "Notifications: Clear All Notifications");

    step("kill the language server; the extension starts a new one");
    const [killed] = await waitFor("the language server process", () => {
      const pids = serverPids(config.session);
      return pids.length === 1 ? pids : undefined;
    });
    process.kill(killed, "SIGKILL");
    result.killedServer = killed;
    result.restartedServer = await waitFor("a new language server", () =>
      serverPids(config.session).find((pid) => pid !== killed),
    );
    await page.locator('[aria-label^="cudalens starting"]').first().waitFor({ state: "detached" });
    await running.first().waitFor();
    result.keyNotInEnvironment = keyNotInEnvironment(result.restartedServer, config.apiKeyEnv ?? "", config.apiKey);
    save();
    step("done");
  } catch (error) {
    result.error = error instanceof Error ? error.message : String(error);
    if (result.notifications.length === 0) {
      result.notifications = await texts(page, ".notification-toast .notification-list-item-message").catch(() => []);
    }
    result.statusBar = await texts(page, ".statusbar-item").catch(() => []);
    await page.screenshot({ path: path.join(config.artifacts, "failure.png") }).catch(() => undefined);
  } finally {
    save();
    await browser.close();
  }
}

// A new window: open the file at once and time its first diagnostic (a squiggle of any severity). The server's
// start comes from /proc (the boot time of its process), so the part before the server runs shows apart.
async function firstDiagnostics(page: Page, navigated: number): Promise<void> {
  const workbenchMs = Date.now() - navigated;
  step(`open ${config.file}`);
  await page.keyboard.press("Control+P");
  const input = page.locator(".quick-input-widget input");
  await input.waitFor({ state: "visible" });
  await input.fill(config.file);
  await page.locator(".quick-input-list .monaco-list-row", { hasText: config.file }).first().waitFor();
  const openedMs = Date.now() - navigated; // the Enter that opens it: the person's "open" (the tab shows later)
  await page.keyboard.press("Enter");
  step("wait for its first diagnostic");
  const floor = config.floor
    ? page.locator(".monaco-editor .squiggly-hint").first().waitFor().then(() => Date.now() - navigated)
    : undefined;
  await page.locator(".monaco-editor .squiggly-error, .monaco-editor .squiggly-warning, " +
    ".monaco-editor .squiggly-info").first().waitFor();
  const diagnosticsMs = Date.now() - navigated;
  const floorMs = await floor;
  const started = serverPids(config.session).map(processStartMs).filter((t) => t !== undefined) as number[];
  // the newest: in an editor session with earlier windows, theirs are still running
  result.first = { workbenchMs, openedMs, diagnosticsMs,
    serverStartedMs: started.length > 0 ? Math.max(...started) - navigated : undefined, navigatedAt: navigated,
    floorMs };
  save();
  await page.screenshot({ path: path.join(config.artifacts, "first.png") });
  step("done");
}

// When a process started, in the epoch milliseconds of Date.now() (its /proc stat start time after boot).
function processStartMs(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const ticks = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19]);
    const uptime = Number(readFileSync("/proc/uptime", "utf8").split(" ")[0]);
    return Date.now() - (uptime - ticks / 100) * 1000;  // USER_HZ is 100 on Linux
  } catch {
    return undefined;
  }
}

// An untrusted window, after its static hints were seen: a save that runs nothing, and a kernel command that
// answers that the workspace is not trusted.
async function restrictedWalk(page: Page): Promise<void> {
  step("save: nothing may run");
  await page.locator(".monaco-editor .view-lines").first().click();
  await page.keyboard.press("End");
  await page.keyboard.type(" ");
  await page.keyboard.press("Control+S");
  await page.locator(".tab.dirty").waitFor({ state: "detached" });
  step(`run ${config.runCommand}`);
  await goToLine(page, config.quickFixLine);
  await runCommand(page, config.runCommand ?? "cudalens: Run tests");
  const toast = page.locator(".notification-toast .notification-list-item-message");
  await toast.filter({ hasText: "not trusted" }).first().waitFor();
  result.notifications = await texts(page, ".notification-toast .notification-list-item-message");
  result.servers = serverProcesses(config.session).map(([, argv]) => argv);
  await page.screenshot({ path: path.join(config.artifacts, "restricted.png") });
  if (config.showReport) {
    await showReportWalk(page);
  }
  step("done");
}

// "Ask Coder about this" on a finding: the server's question carries the Coder's explanation and offers Apply /
// Show diff / Discard; "Show diff" opens VS Code's diff editor (the document against the proposal's virtual
// document), then Apply edits the document, which is saved.
// Ctrl+. as a person presses it: again when the menu did not open. A press that lands while Go to Line's input
// is still closing reaches no editor (the lightbulb is there, the menu never opens: one run in three on 2 cores).
async function openQuickFixes(page: Page) {
  const actions = page.locator(".action-widget .monaco-list-row");
  for (let attempt = 1; ; attempt++) {
    await page.keyboard.press("Control+.");
    try {
      await actions.first().waitFor({ timeout: attempt < 4 ? 5000 : config.timeoutMs });
      return actions;
    } catch (error) {
      if (attempt >= 4) {
        throw error;
      }
      await page.locator(".monaco-editor .view-lines").first().click();
      await goToLine(page, config.quickFixLine, config.quickFixColumn);
    }
  }
}

async function askWalk(page: Page): Promise<void> {
  step("ask the Coder about the finding (a quick fix)");
  await page.locator(".monaco-editor .view-lines").first().click();
  await goToLine(page, config.quickFixLine, config.quickFixColumn);
  const actions = await openQuickFixes(page);
  result.quickFixes = await texts(page, ".action-widget .monaco-list-row");
  await actions.filter({ hasText: config.quickFixTitle }).first().click();
  step("the proposal: the Coder's explanation with Apply / Show diff / Discard");
  const proposal = page.locator(".notification-toast", { hasText: "the Coder's suggestion" });
  await proposal.locator(".monaco-button", { hasText: "Show diff" }).first().waitFor();
  const ask = {
    notification: (await texts(page, ".notification-toast .notification-list-item-message")).join("\n"),
    buttons: await proposal.first().locator(".monaco-button").allInnerTexts(),
    diffTab: "",
    diffEditor: false,
    original: "",
    modified: "",
    saved: false,
  };
  result.ask = ask;
  save();
  await page.screenshot({ path: path.join(config.artifacts, "ask.png") });
  step("Show diff");
  await proposal.locator(".monaco-button", { hasText: "Show diff" }).first().click();
  const diff = page.locator(".monaco-diff-editor");
  await diff.first().waitFor();
  await diff.locator(".editor.modified .view-lines").first().waitFor();
  await page.waitForTimeout(1000); // both sides rendered
  ask.diffEditor = true;
  ask.diffTab = (await page.locator(".tab.active").first().getAttribute("aria-label")) ?? "";
  ask.original = (await diff.locator(".editor.original .view-lines").first().innerText()).replace(/\u00a0/g, " ");
  ask.modified = (await diff.locator(".editor.modified .view-lines").first().innerText()).replace(/\u00a0/g, " ");
  save();
  await page.screenshot({ path: path.join(config.artifacts, "ask-diff.png") });
  step("Apply, then save");
  const apply = page.locator(".notification-toast .monaco-button", { hasText: "Apply" });
  await apply.first().waitFor();
  await apply.first().click();
  const dirty = page.locator(".tab.dirty");
  await dirty.first().waitFor();
  await dirty.first().click(); // the file's own tab (the diff's is read-only on the proposal's side)
  await page.locator(`.tab.active[aria-label="${config.file}"]`).first().waitFor();
  await page.keyboard.press("Control+S");
  await page.locator(".tab.dirty").first().waitFor({ state: "detached" });
  ask.saved = true;
  save();
  step("done");
}

// A subfolder of a clone, untrusted: nothing of the repository runs. Trusted: the server starts once, from the
// clone's .venv above the folder. Then the lenses of a kernel (no GPU: they say so) and a lens that runs a
// command ("Find hot ops"): its progress in the status bar, its answer, its line in the cudalens output.
async function everydayWalk(page: Page): Promise<void> {
  const everyday = { restrictedNotifications: [] as string[], lenses: [] as string[], progress: [] as string[],
    serversStarted: [] as number[] };
  result.everyday = everyday;
  const seenServers = new Set<number>();
  const watch = setInterval(() => serverPids(config.session).forEach((pid) => seenServers.add(pid)), 100);
  try {
    step(`open ${config.file} in Restricted Mode`);
    await page.locator(".monaco-workbench").click({ position: { x: 700, y: 400 } });
    await openFile(page, config.file);
    const toast = page.locator(".notification-toast .notification-list-item-message");
    await toast.filter({ hasText: "cudalens was not found" }).first().waitFor();
    everyday.restrictedNotifications = await texts(page, ".notification-toast .notification-list-item-message");
    await runCommand(page, "Notifications: Clear All Notifications");
    save();

    step("trust the workspace");
    await runCommand(page, "Workspaces: Manage Workspace Trust");
    await page.locator(".workspace-trust-editor .monaco-button", { hasText: /^Trust$/ }).first().click();
    const modal = page.locator(".monaco-modal-editor-block");
    await page.keyboard.press("Escape");
    if (!(await modal.first().waitFor({ state: "detached", timeout: 3_000 }).then(() => true, () => false))) {
      await modal.locator(".codicon-close, .codicon-x").first().click();
      await modal.first().waitFor({ state: "detached" });
    }
    await page.locator('[aria-label^="cudalens running"]').first().waitFor();
    await page.waitForTimeout(5_000); // a second start, had one been asked for, would have begun by now

    step(`the lenses of ${config.file}`);
    await openFile(page, config.file);
    await page.locator(".codelens-decoration", { hasText: "cudalens:" }).first().waitFor();
    await page.waitForTimeout(1_500); // the refresh once the server knows the GPU
    everyday.lenses = await texts(page, ".codelens-decoration");
    await page.screenshot({ path: path.join(config.artifacts, "lenses.png") });
    save();

    step(`click the Find hot ops lens of ${config.modelFile}`);
    await openFile(page, config.modelFile ?? "");
    // the open editor's lens: an editor left in the background keeps its (hidden) lenses in the page
    const lens = page.locator(".codelens-decoration a").filter({ hasText: "Find hot ops", visible: true }).first();
    await lens.waitFor();
    await lens.click();
    const answer = toast.filter({ hasText: "hot ops of" }).first();
    const deadline = Date.now() + config.timeoutMs;
    while (!(await answer.isVisible()) && Date.now() < deadline) {
      // the server's progress: VS Code shows it in the status bar (its title and message, or on hover)
      const items = [
        ...(await texts(page, ".statusbar-item")),
        ...((await page.locator(".statusbar-item [aria-label]").evaluateAll((es) =>
          es.map((e) => e.getAttribute("aria-label") ?? ""))) as string[]),
      ];
      const spinner = items.find((t) => t.includes("Find hot ops"));
      if (spinner !== undefined && !everyday.progress.includes(spinner)) {
        everyday.progress.push(spinner);
        await page.screenshot({ path: path.join(config.artifacts, "find-hot-ops-progress.png") });
      }
      await page.waitForTimeout(100);
    }
    await answer.waitFor();
    result.notifications = await texts(page, ".notification-toast .notification-list-item-message");
    save();
    step("the answer's line in the cudalens output");
    await runCommand(page, "cudalens: Show output");
    await page.locator(".part.panel .view-lines", { hasText: "Find hot ops ·" }).first().waitFor();
    await page.screenshot({ path: path.join(config.artifacts, "find-hot-ops-output.png") });
  } finally {
    clearInterval(watch);
    everyday.serversStarted = [...seenServers];
    save();
  }
  step("done");
}

// "cudalens: Show report": the page opens in a webview (an iframe in an iframe); read it from inside.
async function showReportWalk(page: Page): Promise<void> {
  step("run cudalens: Show report");
  await runCommand(page, "cudalens: Show report");
  const deadline = Date.now() + config.timeoutMs;
  let frame: Frame | undefined;
  while (frame === undefined) {
    for (const f of page.frames()) {
      if (await f.$("#verdicts").catch(() => null)) {
        frame = f;
      }
    }
    if (frame === undefined && Date.now() > deadline) {
      throw new Error("timed out waiting for the report's webview");
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  result.report = {
    headings: (await frame.locator("h2").allTextContents()).map((t) => t.trim()),
    verdicts: (await frame.locator("#verdicts + table tr").allTextContents()).map((t) => t.trim()),
    svgs: await frame.locator("svg").count(),
  };
  await page.screenshot({ path: path.join(config.artifacts, "report-webview.png") });
}

// A toast shows one line of a long message: the notification center, with the newest expanded, shows all of it.
async function showNewestNotification(page: Page): Promise<void> {
  await runCommand(page, "Notifications: Show Notifications");
  const center = page.locator(".notifications-center .monaco-list-row");
  await center.first().waitFor();
  await center.first().click({ position: { x: 5, y: 5 } });
  await page.keyboard.press("ArrowRight"); // notification.expand
  await page.waitForTimeout(500);
}

// See DriverResult.keyNotInEnvironment.
function keyNotInEnvironment(pid: number, name: string, key: string): boolean {
  let block: Buffer;
  try {
    block = readFileSync(`/proc/${pid}/environ`);
  } catch {
    return false;
  }
  const marker = Buffer.from(`${name}=`);
  const at = block.indexOf(marker);
  return name !== "" && key !== "" && !(at === 0 || (at > 0 && block[at - 1] === 0)) && !block.includes(Buffer.from(key));
}

// No server anywhere: the error says where it looked and how to get one; "Open settings" opens `cudalens.path`.
async function notFoundWalk(page: Page): Promise<void> {
  step(`open ${config.file}: the extension looks for the server`);
  await page.locator(".monaco-workbench").click({ position: { x: 700, y: 400 } });
  await openFile(page, config.file);
  const toast = page.locator(".notification-toast .notification-list-item", { hasText: "cudalens was not found" });
  await toast.first().waitFor();
  result.notifications = await texts(page, ".notification-toast .notification-list-item-message");
  result.statusBar = await texts(page, ".statusbar-item");
  await showNewestNotification(page);
  await page.screenshot({ path: path.join(config.artifacts, "not-found.png") });
  step("click Open settings");
  await page.locator(".notifications-center .monaco-button", { hasText: "Open settings" }).first().click();
  const row = page.locator(".settings-editor .setting-item-contents");
  await row.first().waitFor();
  result.settingsShown = await texts(page, ".settings-editor .setting-item-title");
  await page.screenshot({ path: path.join(config.artifacts, "open-settings.png") });
  step("done");
}

main().catch((error) => {
  console.error(`[driver] ${error instanceof Error ? error.message : error}`);
  process.exit(1);
});
