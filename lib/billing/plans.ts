/** Which plans can be bought and for how much. Pure. */
import type { PlanName, Plans } from '../config/index.ts';

/** Every plan with a price: a trial is never sold, it is what a customer upgrades from. */
export function purchasablePlans(plans: Plans): PlanName[] {
  return (Object.keys(plans) as PlanName[]).filter((name) => plans[name].price_inr > 0);
}

export function pricePaise(plan: PlanName, plans: Plans): number {
  return plans[plan].price_inr * 100;
}

/** Why a paid link does not renew its key, or null when it does. */
export type NotAppliedReason =
  | 'amount_mismatch' | 'currency_mismatch' | 'not_captured' | 'unknown_plan' | 'unknown_key' | 'key_revoked' | 'wrong_gateway'
  /** A plan below the key's while its period runs (renewal.ts): a payment never lowers a key. */
  | 'lower_plan';

/** A payment applies only for a known, purchasable plan at exactly its price in INR, captured. */
export function paymentProblem(
  paid: { amount_paise: number; currency: string; status: string; plan: PlanName | null },
  plans: Plans,
): NotAppliedReason | null {
  if (!paid.plan || !purchasablePlans(plans).includes(paid.plan)) return 'unknown_plan';
  if (paid.status !== 'captured') return 'not_captured';
  if (paid.currency !== 'INR') return 'currency_mismatch';
  if (paid.amount_paise !== pricePaise(paid.plan, plans)) return 'amount_mismatch';
  return null;
}
