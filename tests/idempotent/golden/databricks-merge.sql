-- count_insert; parameters: interval_start, interval_end
SELECT COUNT(*) FROM `dagguard_stage` AS dg_batch WHERE NOT EXISTS(SELECT 1 FROM `analytics`.`orders` AS dg_target WHERE dg_target.`order_id` = dg_batch.`order_id` AND dg_target.`region` IS NOT DISTINCT FROM dg_batch.`region` AND dg_target.`created_at` >= ? AND dg_target.`created_at` < ?);

-- count_update; parameters: interval_start, interval_end
SELECT COUNT(*) FROM `analytics`.`orders` AS dg_target JOIN `dagguard_stage` AS dg_batch ON dg_target.`order_id` = dg_batch.`order_id` AND dg_target.`region` IS NOT DISTINCT FROM dg_batch.`region` AND dg_target.`created_at` >= ? AND dg_target.`created_at` < ? WHERE dg_target.`created_at` IS DISTINCT FROM dg_batch.`created_at` OR dg_target.`amount` IS DISTINCT FROM dg_batch.`amount` OR dg_target.`ds` IS DISTINCT FROM dg_batch.`ds`;

-- merged; parameters: interval_start, interval_end, interval_start, interval_end
MERGE INTO `analytics`.`orders` AS dg_target USING `dagguard_stage` AS dg_batch ON dg_target.`order_id` = dg_batch.`order_id` AND dg_target.`region` IS NOT DISTINCT FROM dg_batch.`region` AND dg_target.`created_at` >= ? AND dg_target.`created_at` < ? WHEN MATCHED AND (dg_target.`created_at` IS DISTINCT FROM dg_batch.`created_at` OR dg_target.`amount` IS DISTINCT FROM dg_batch.`amount` OR dg_target.`ds` IS DISTINCT FROM dg_batch.`ds`) THEN UPDATE SET `created_at` = dg_batch.`created_at`, `amount` = dg_batch.`amount`, `ds` = dg_batch.`ds` WHEN NOT MATCHED THEN INSERT (`order_id`, `region`, `created_at`, `amount`, `ds`) VALUES (dg_batch.`order_id`, dg_batch.`region`, dg_batch.`created_at`, dg_batch.`amount`, dg_batch.`ds`) WHEN NOT MATCHED BY SOURCE AND dg_target.`created_at` >= ? AND dg_target.`created_at` < ? THEN DELETE;

