/**
 * Makes writes to a stdout whose reader has gone (`conveyor serve | head -1`, a log shipper that
 * restarted) do nothing, rather than end the gateway. Node reports such a write as an `error` event
 * on process.stdout (EPIPE, then ERR_STREAM_DESTROYED for every write after it), which nothing
 * listens to: the banner's second line, or the `shutting down…` line of a SIGTERM, was an uncaught
 * exception that killed the gateway, the drain of the requests in flight with it. The gateway's job
 * is answering requests; its stdout is only where it says what it does. Other errors stay errors.
 */
export function ignoreClosedStdout(stdout: NodeJS.WriteStream = process.stdout): void {
  stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE' || err.code === 'ERR_STREAM_DESTROYED') return;
    throw err;
  });
}
