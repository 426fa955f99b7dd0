// When the server dies, restart it after a growing delay; stop trying once it keeps dying, so a server that
// crashes at start-up does not spin. Kept free of `vscode` for plain-Node tests.

export interface RestartDecision {
  restart: boolean;
  delayMs: number;
  crashesInWindow: number;
}

export class RestartPolicy {
  private crashes: number[] = [];

  constructor(
    readonly maxCrashes = 5,
    readonly windowMs = 3 * 60_000,
    readonly firstDelayMs = 1_000,
    readonly maxDelayMs = 16_000,
  ) {}

  // Called each time the connection closes without the user asking.
  onCrash(now: number): RestartDecision {
    this.crashes = this.crashes.filter((t) => now - t < this.windowMs);
    this.crashes.push(now);
    const n = this.crashes.length;
    if (n >= this.maxCrashes) {
      return { restart: false, delayMs: 0, crashesInWindow: n };
    }
    const delayMs = Math.min(this.firstDelayMs * 2 ** (n - 1), this.maxDelayMs);
    return { restart: true, delayMs, crashesInWindow: n };
  }

  // A restart the user asked for starts the count afresh.
  reset(): void {
    this.crashes = [];
  }
}

// Starts, stops and restarts run one after another. A restart asked for while another is still waiting to begin
// is that one: trusting a workspace fires the trust event and a settings change (its restricted settings count
// now) at once, and each asked for a restart, so the server started twice.
export class StepQueue {
  private tail: Promise<void> = Promise.resolve();
  private waitingRestart: Promise<void> | undefined;

  run(step: () => Promise<void>): Promise<void> {
    this.tail = this.tail.then(step, step);
    return this.tail;
  }

  restart(step: () => Promise<void>): Promise<void> {
    if (this.waitingRestart === undefined) {
      this.waitingRestart = this.run(async () => {
        this.waitingRestart = undefined; // asked for from here on: after this one read the settings
        await step();
      });
    }
    return this.waitingRestart;
  }

  // Settles once the steps asked for so far are done.
  settled(): Promise<void> {
    return this.tail;
  }
}
