import type { ExecutedResponse, ForwardExecutor } from '../../../src/modules/forwarding/request/forward-executor';
import type { ForwardPlan } from '../../../src/modules/forwarding/request/forward-plan';

type Execute = ForwardExecutor['execute'];
/** What one send ends in: the downstream's answer, or the error the executor throws. */
type Outcome = { status: number; headers?: Record<string, string>; body?: string } | { error: unknown };

/**
 * The executor at its seam: each call takes the next scripted outcome, or, for one made with `hold()`,
 * waits until the test releases it (an attempt in flight while something else happens to its job).
 */
export class FakeForwardExecutor implements Pick<ForwardExecutor, 'execute'> {
  /** The plans sent, as the executor got them. */
  readonly sent: ForwardPlan[] = [];
  private readonly script: Array<{ outcome: Outcome | Promise<Outcome>; started?: () => void }> = [];

  answer(...outcomes: Outcome[]): this {
    this.script.push(...outcomes.map((outcome) => ({ outcome })));
    return this;
  }

  /** The next send waits: `release` gives its outcome; `sending` resolves once it has started. */
  hold(): { sending: Promise<void>; release: (outcome: Outcome) => void } {
    let release!: (outcome: Outcome) => void;
    let started!: () => void;
    const outcome = new Promise<Outcome>((resolve) => (release = resolve));
    const sending = new Promise<void>((resolve) => (started = resolve));
    this.script.push({ outcome, started });
    return { sending, release };
  }

  execute: Execute = async (plan) => {
    this.sent.push(plan);
    const next = this.script.shift();
    if (!next) throw new Error('the fake executor has no outcome scripted for this send');
    next.started?.();
    const outcome = await next.outcome;
    if ('error' in outcome) throw outcome.error;
    const response: ExecutedResponse = {
      status: outcome.status,
      headers: outcome.headers ?? {},
      body: Buffer.from(outcome.body ?? ''),
      withheld: [],
    };
    return response;
  };
}
