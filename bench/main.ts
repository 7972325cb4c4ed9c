/**
 * npm run bench [-- <section>...] — prints every figure the issues ask for, measured side by side
 * in one run on this machine. Sections: normalize, mapping, carriers, api, pipeline, lanes, replay, webhooks, analyzer, network, prediction, startup, outage, page, notify.
 */
import { benchAnalyzer } from './analyzer.ts';
import { benchApi } from './api.ts';
import { benchCarriers } from './carriers.ts';
import { benchLanes } from './lanes.ts';
import { benchMapping } from './mapping.ts';
import { benchNetwork } from './network.ts';
import { benchNormalize } from './normalize.ts';
import { benchOutage } from './outage.ts';
import { benchPage } from './page.ts';
import { benchNotify } from './notify.ts';
import { benchPipeline } from './pipeline.ts';
import { benchPrediction } from './prediction.ts';
import { benchReplay } from './replay.ts';
import { benchStartup } from './startup.ts';
import { benchWebhooks } from './webhooks.ts';
import { printResults, type BenchResult } from './report.ts';

const SECTIONS: Record<string, { title: string; run: () => Promise<BenchResult[]> }> = {
  normalize: { title: 'Normalization (npm run bench -- normalize)', run: benchNormalize },
  mapping: { title: 'Mapping coverage: unknown events per carrier over the kept carrier bodies (npm run bench -- mapping)', run: benchMapping },
  carriers: { title: 'Carrier clients against the sandbox (npm run bench -- carriers)', run: benchCarriers },
  api: { title: 'API throughput and memory (npm run bench -- api)', run: benchApi },
  lanes: { title: 'Windowed lane statistics: refresh at 5 M vs 50 M history, same window (npm run bench -- lanes)', run: benchLanes },
  pipeline: { title: 'Pipeline: Kafka → normalizer → ClickHouse, lane benchmarks at scale (npm run bench -- pipeline)', run: benchPipeline },
  replay: { title: 'Replay over 1 M polls stored in ClickHouse: --diff, --apply (npm run bench -- replay)', run: benchReplay },
  webhooks: { title: 'Push: deliveries to a verifying receiver, embedded vs Redis; poll on Kafka → delivery (npm run bench -- webhooks)', run: benchWebhooks },
  network: {
    title: 'Simulated network: its figures against published bands; 1 M journeys generated; their history through Kafka and the normalizer into ClickHouse'
      + ' (npm run bench -- network)',
    run: benchNetwork,
  },
  prediction: { title: 'Delivery prediction: backtests on two generators, rebuild over 1 M delivered, cost per lookup (npm run bench -- prediction)', run: benchPrediction },
  startup: { title: 'npm start: spawn to /readyz (first start and restart) and idle RSS, native vs tsx (npm run bench -- startup)', run: benchStartup },
  outage: { title: 'After a broker outage: lookups while a 100,000-poll spool drains to Kafka, and the drain\'s rate (npm run bench -- outage)', run: benchOutage },
  notify: { title: 'Customer notices: a burst of changes → WhatsApp notices accepted by the sandbox provider, rate, p99, duplicates (npm run bench -- notify)', run: benchNotify },
  page: { title: 'Tracking page: views per second from the cache, p99, bytes per page in each language (npm run bench -- page)', run: benchPage },
  analyzer: { title: 'Shipment analyzer: end to end on the embedded default, the report alone (npm run bench -- analyzer)', run: benchAnalyzer },
};

async function main(): Promise<void> {
  const wanted = process.argv.slice(2).filter((a) => !a.startsWith('-'));
  const names = wanted.length ? wanted : Object.keys(SECTIONS);
  console.log(`bench: node ${process.version}, ${new Date().toISOString()}`);
  for (const name of names) {
    const section = SECTIONS[name];
    if (!section) throw new Error(`unknown bench section "${name}" (known: ${Object.keys(SECTIONS).join(', ')})`);
    printResults(section.title, await section.run());
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
