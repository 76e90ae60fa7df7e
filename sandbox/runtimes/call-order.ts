import { SandboxError } from '../../core/errors.ts';

/**
 * piece() or end() out of a call's order (ToolExecution: its pieces, then end() once). The gateway
 * keeps to it; a test that drives tool.start() by hand need not, and each runtime did something of
 * its own with a piece after end() (ran onPiece beside or after onEnd, or awaited a verdict that
 * never came) and with a second end() (ran onEnd twice, or never settled).
 */
export class CallOutOfOrderError extends SandboxError {
  constructor(plugin: string, method: 'piece' | 'end') {
    super(`${plugin}: ${method}() after end(): a call is its pieces, then end() once`);
  }
}

/**
 * One call's guard: end() marks it, and a piece() or end() after that is refused with a
 * CallOutOfOrderError before it reaches any hook.
 *
 * @example
 * const order = new CallOrder('word_count');
 * order.end(); // in end(), first thing
 * order.piece(); // in piece(): throws, end() came first
 */
export class CallOrder {
  private readonly plugin: string;
  private ended = false;

  constructor(plugin: string) {
    this.plugin = plugin;
  }

  piece(): void {
    if (this.ended) throw new CallOutOfOrderError(this.plugin, 'piece');
  }

  end(): void {
    if (this.ended) throw new CallOutOfOrderError(this.plugin, 'end');
    this.ended = true;
  }
}
