/**
 * The longest delay Node's timers keep (2^31 − 1 ms, about 24.8 days). setTimeout turns a longer
 * one into 1 ms, with nothing but a TimeoutOverflowWarning, so a limit written large to mean
 * "practically none" fired at once ("timed out after 3000000000 ms"). Every setting that ends in a
 * timer is refused past it where it is configured.
 */
export const MAX_TIMER_MS = 2_147_483_647;

/** Why a setting past MAX_TIMER_MS is refused, for its error message. */
export const MAX_TIMER_MS_RULE = `at most ${MAX_TIMER_MS} ms (about 24.8 days, the longest timer Node keeps; past it the timer fires at once)`;
