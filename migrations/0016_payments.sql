-- payments: every payment the gateway reported (contracts.md "Paying: renewal and upgrade"), for the
-- business's own reporting (revenue per plan and month, payments not applied). The state that
-- decides renewals lives beside the keys (Redis or DATA_DIR); this is a copy written once a payment
-- is settled. amount_paise is what was paid; applied = 1 when it renewed the key, else reason says
-- why not (amount_mismatch, key_revoked, ...). ReplacingMergeTree: a row written twice (a retry)
-- collapses to one on merge; use FINAL or uniqExact(payment_id) for exact figures before a merge.
CREATE TABLE IF NOT EXISTS payments
(
    payment_id String,
    key_prefix String,
    plan String,
    amount_paise UInt64,
    currency String,
    status String,
    gateway String,
    link_id String,
    reference_id String,
    applied UInt8,
    reason String,
    paid_at DateTime('UTC')
)
ENGINE = ReplacingMergeTree()
PARTITION BY toYYYYMM(paid_at)
ORDER BY (key_prefix, payment_id);
