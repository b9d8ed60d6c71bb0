import autocannon from 'autocannon';
import { readFileSync } from 'node:fs';
const [pid, url, token, secs = '6'] = process.argv.slice(2);
const ticks = () => { const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' '); return Number(f[11]) + Number(f[12]); };
const run = (d: number) => new Promise<any>((res, rej) => autocannon({ url: url!, connections: Number(process.env.C ?? 20), duration: d, headers: token ? { authorization: `Bearer ${token}` } : {} }, (e, r) => e ? rej(e) : res(r)));
await run(2);
const t0 = ticks(); const r = await run(Number(secs)); const t1 = ticks();
const n = r.requests.total; 
console.log(`${n} req, ${r.requests.average} req/s, non2xx ${r.non2xx}, CPU per request ${(((t1 - t0) * 10000) / n).toFixed(0)} µs`);
