/**
 * Our gateway in its own process for the overhead benchmarks: the whole product as `npm start`
 * wires it (startConveyor: sandbox, runtime pools, built-in tools), in front of `--upstream`.
 * Prints `conveyor gateway listening on <url>/v1`; answers `{type:'cpu'}` over IPC with its own
 * process.cpuUsage() (µs, all threads), finer than /proc's 10 ms ticks.
 *
 *   node --import tsx bench/overhead/gateway-entry.ts --upstream http://127.0.0.1:8000/v1
 */
import { closeUpstreamPools } from '../../llm-client/index.ts';
import { startConveyor } from '../../gateway/start-conveyor.ts';

const at = process.argv.indexOf('--upstream');
const upstream = at >= 0 ? process.argv[at + 1] : undefined;
if (!upstream) {
  console.error('gateway-entry: --upstream <url> is required');
  process.exit(2);
}

const conveyor = await startConveyor({ gateway: { port: 0, upstream: { baseUrl: upstream } } });
console.log(`conveyor gateway listening on ${conveyor.gateway.url}/v1`);

process.on('message', (m: { type?: string }) => {
  if (m?.type !== 'cpu') return;
  const { user, system } = process.cpuUsage();
  process.send?.({ type: 'cpu', us: user + system });
});
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    conveyor
      .close()
      .then(() => closeUpstreamPools())
      .then(() => process.exit(0), () => process.exit(1));
  });
}
// The IPC channel keeps the process alive; when the parent dies without a signal, leave too.
process.on('disconnect', () => process.kill(process.pid, 'SIGTERM'));
