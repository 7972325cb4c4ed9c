/**
 * What a payment may do to a key (contracts.md "Paying: renewal and upgrade"; issue 29): a payment
 * never lowers what a key has. Pure.
 * - While the key's period runs, it buys the same plan (a renewal) or a higher one (an upgrade);
 *   a lower plan only once the period has ended. A trial is below every plan for sale.
 * - A renewal of the same plan keeps the key's limits, so an operator's overrides survive it.
 * - An upgrade takes the new plan's limits, but never below what the key had (an override higher
 *   than the new plan's number stays).
 * - A lower plan after the period ended takes that plan's limits: the customer chose less.
 * The renewal page offers only what this allows, and the webhook applies the same rule to the key
 * as stored when the payment arrives (a link made earlier cannot undo a later upgrade).
 */
import { renewedRecord, type KeyRecord } from '../access/record.ts';
import type { PlanName, Plans } from '../config/index.ts';
import { purchasablePlans } from './plans.ts';

/** Plans rank by price: what costs less gives less. */
function isLower(plan: PlanName, than: PlanName, plans: Plans): boolean {
  return plans[plan].price_inr < plans[than].price_inr;
}

function periodOver(record: KeyRecord, now: Date): boolean {
  return now.getTime() >= Date.parse(record.period_end);
}

/** The plans a key may buy now, cheapest first. */
export function plansOnOffer(record: KeyRecord, plans: Plans, now: Date): PlanName[] {
  return purchasablePlans(plans)
    .filter((plan) => !isLower(plan, record.plan, plans) || periodOver(record, now))
    .sort((a, b) => plans[a].price_inr - plans[b].price_inr);
}

/** The plan the page shows chosen: the one the link asked for when on offer, else the cheapest on offer. */
export function offeredChoice(requested: PlanName | undefined, offer: readonly PlanName[]): PlanName | null {
  if (requested && offer.includes(requested)) return requested;
  return offer[0] ?? null;
}

/** The key after a payment for `plan`, or null when the rule refuses it (a lower plan mid-period). */
export function paidRenewal(record: KeyRecord, plan: PlanName, plans: Plans, now: Date): KeyRecord | null {
  if (plan === record.plan) return renewedRecord(record, plans, undefined, now);
  if (isLower(plan, record.plan, plans)) return periodOver(record, now) ? renewedRecord(record, plans, plan, now) : null;
  const upgraded = renewedRecord(record, plans, plan, now);
  return {
    ...upgraded,
    lookups_limit: Math.max(upgraded.lookups_limit, record.lookups_limit),
    daily_quota: Math.max(upgraded.daily_quota, record.daily_quota),
    burst_per_second: Math.max(upgraded.burst_per_second, record.burst_per_second),
  };
}
