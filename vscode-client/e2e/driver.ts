// Drives a running code-server (a real VS Code in the browser) with playwright-core and Debian's chromium, the way
// a person would: open the CUDA file, read the Problems panel, apply a quick fix, run "cudalens: Optimize kernel".
// Usage: node out/e2e/driver.js CONFIG.json — writes result.json and screenshots into the config's artifacts
// folder. Assertions belong to the pytest test that starts it (tests/vscode/test_vscode_e2e.py); this script
// records what it saw, and exits non-zero only when the editor itself could not be driven.
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { chromium, type Page } from "playwright-core";

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
  mode?: "trusted" | "restricted";
  runCommand?: string;
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
  await page.keyboard.press("F1");
  const input = page.locator(".quick-input-widget input");
  await input.waitFor({ state: "visible" });
  await input.fill(`>${title}`);
  await page.locator(".quick-input-list .monaco-list-row", { hasText: title }).first().waitFor();
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
      if (fields[0] !== "Z" && Number(fields[3]) === session && argv.includes("cudalens") && argv.includes("serve")) {
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
    await page.goto(config.url);
    await page.locator(".monaco-workbench").waitFor();

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
    await page.keyboard.press("Control+.");
    const actions = page.locator(".action-widget .monaco-list-row");
    await actions.first().waitFor();
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

    step("kill the language server; the extension starts a new one");
    const running = page.locator('[aria-label^="cudalens running"]');
    await running.first().waitFor();
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
    save();
    await runCommand(page, "Notifications: Clear All Notifications");

    step(`run cudalens: Optimize kernel in ${config.optimizeFile}`);
    await openFile(page, config.optimizeFile);
    await goToLine(page, config.optimizeLine);
    await runCommand(page, "cudalens: Optimize kernel");
    await toast
      .filter({ hasText: new RegExp(config.optimizeFinal) })
      .first()
      .waitFor({ timeout: config.optimizeTimeoutMs });
    result.notifications = await texts(page, ".notification-toast .notification-list-item-message");
    result.statusBar = await texts(page, ".statusbar-item");
    await page.screenshot({ path: path.join(config.artifacts, "optimize.png") });
    step("done");
  } catch (error) {
    result.error = error instanceof Error ? error.message : String(error);
    result.notifications = await texts(page, ".notification-toast .notification-list-item-message").catch(() => []);
    result.statusBar = await texts(page, ".statusbar-item").catch(() => []);
    await page.screenshot({ path: path.join(config.artifacts, "failure.png") }).catch(() => undefined);
  } finally {
    save();
    await browser.close();
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
  step("done");
}

main().catch((error) => {
  console.error(`[driver] ${error instanceof Error ? error.message : error}`);
  process.exit(1);
});
