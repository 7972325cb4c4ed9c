/** Every carrier's side of the sandbox network, one renderer per supported carrier. */
import { renderer as bluedart } from './carriers/bluedart.ts';
import { renderer as delhivery } from './carriers/delhivery.ts';
import { renderer as dtdc } from './carriers/dtdc.ts';
import { renderer as ekart } from './carriers/ekart.ts';
import { renderer as indiapost } from './carriers/indiapost.ts';
import { renderer as professionalcouriers } from './carriers/professionalcouriers.ts';
import { renderer as shadowfax } from './carriers/shadowfax.ts';
import { renderer as shiprocket } from './carriers/shiprocket.ts';
import { renderer as shreemaruti } from './carriers/shreemaruti.ts';
import { renderer as speedpost } from './carriers/speedpost.ts';
import { renderer as xpressbees } from './carriers/xpressbees.ts';
import type { SandboxRenderer } from './types.ts';

export const RENDERERS: readonly SandboxRenderer[] = [
  delhivery,
  bluedart,
  dtdc,
  shiprocket,
  shreemaruti,
  indiapost,
  speedpost,
  xpressbees,
  shadowfax,
  ekart,
  professionalcouriers,
];
