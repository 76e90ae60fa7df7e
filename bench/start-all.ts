/**
 * Starts `count` things at once (a workload's gateway and tool stand-ins each). If any fails, the
 * ones that did start are closed before its error is thrown: left open, their servers, sandbox
 * processes and thread workers kept the bench process alive after it had reported the failure.
 */
export async function startAll<T>(count: number, start: (index: number) => Promise<T>, close: (started: T) => Promise<unknown>): Promise<T[]> {
  const settled = await Promise.allSettled(Array.from({ length: count }, (_, i) => start(i)));
  const started = settled.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
  const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (!failed) return started;
  await Promise.allSettled(started.map(close));
  throw failed.reason;
}
