-- deleted; parameters: partition_value
DELETE FROM `analytics`.`orders` WHERE `ds` = ?;

-- inserted; parameters: none
INSERT INTO `analytics`.`orders` (`order_id`, `region`, `created_at`, `amount`, `ds`) SELECT `order_id`, `region`, `created_at`, `amount`, `ds` FROM `dagguard_stage`;

