output "mcp_url" {
  description = "The MCP endpoint to give clients."
  value       = module.taskgate.mcp_url
}

output "sample_state_machine_alias_arn" {
  description = "The sample state machine's alias, which the tool review_order starts."
  value       = aws_sfn_alias.live.arn
}

output "task_role_policy_json" {
  description = "The Step Functions policy of taskgate's task role; for the example's inputs it is iam-policy.json beside this file."
  value       = module.taskgate.task_role_policy_json
}

output "log_group_name" {
  description = "CloudWatch Logs group of taskgate."
  value       = module.taskgate.log_group_name
}
