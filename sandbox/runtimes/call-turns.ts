import type { ToolResult, Verdict } from '../../plugins/plugin-types.ts';

/**
 * What a remote call awaits of its child, in turn: a verdict for each piece sent, then one result
 * once `end` is out. An answer to nothing awaited is out of turn (RemoteExecution.outOfTurn).
 */
export class CallTurns {
  private readonly verdicts = new Map<number, (verdict: Verdict) => void>();
  private resultWaiter: ((result: ToolResult) => void) | null = null;
  /** `end` is out: from then on a `result` is in turn (see RemoteExecution.outOfTurn). */
  private endOut = false;

  get endSent(): boolean {
    return this.endOut;
  }

  get awaitingResult(): boolean {
    return this.resultWaiter !== null;
  }

  awaitVerdict(seq: number, resolve: (verdict: Verdict) => void): void {
    this.verdicts.set(seq, resolve);
  }

  awaitResult(resolve: (result: ToolResult) => void): void {
    this.resultWaiter = resolve;
    this.endOut = true;
  }

  /** Hands piece `seq` its verdict; if it awaits none, returns why the verdict is out of turn. */
  verdict(seq: number, verdict: Verdict): string | undefined {
    const resolve = this.verdicts.get(seq);
    if (!resolve) {
      const hint = this.endOut ? 'answer end with a result' : 'answer each piece once, with its seq';
      return `a verdict for piece ${seq}, which awaits none: ${hint}`;
    }
    this.verdicts.delete(seq);
    resolve(verdict);
    return undefined;
  }

  /** The pending end's waiter, taken (null if none). */
  takeResult(): ((result: ToolResult) => void) | null {
    const waiter = this.resultWaiter;
    this.resultWaiter = null;
    return waiter;
  }

  /** Every piece still waiting gets no verdict. */
  releaseVerdicts(): void {
    for (const resolve of this.verdicts.values()) resolve(undefined);
    this.verdicts.clear();
  }

  /** A pending end resolves with the failure. */
  settleResult(failure: ToolResult | null): void {
    const waiter = this.resultWaiter;
    if (!waiter || !failure) return;
    this.resultWaiter = null;
    waiter(failure);
  }
}
