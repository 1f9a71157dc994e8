output "mcp_url" {
  description = "The MCP endpoint for clients: https://DOMAIN_NAME/mcp."
  value       = local.mcp_url
}

output "load_balancer_dns_name" {
  description = "DNS name of the load balancer, for a CNAME record of domain_name when route53_zone_id is null."
  value       = aws_lb.this.dns_name
}

output "load_balancer_zone_id" {
  description = "Route 53 zone id of the load balancer, for an alias record of domain_name elsewhere."
  value       = aws_lb.this.zone_id
}

output "load_balancer_arn" {
  description = "ARN of the load balancer."
  value       = aws_lb.this.arn
}

output "target_group_arn" {
  description = "ARN of the target group of the taskgate tasks."
  value       = aws_lb_target_group.this.arn
}

output "load_balancer_security_group_id" {
  description = "Security group of the load balancer."
  value       = aws_security_group.load_balancer.id
}

output "service_security_group_id" {
  description = "Security group of the tasks: allow it in a Temporal frontend's or a VPC endpoint's security group."
  value       = aws_security_group.service.id
}

output "cluster_arn" {
  description = "ARN of the ECS cluster the service runs in."
  value       = local.cluster_arn
}

output "service_name" {
  description = "Name of the ECS service."
  value       = aws_ecs_service.this.name
}

output "task_definition_arn" {
  description = "ARN of the task definition revision the service runs."
  value       = aws_ecs_task_definition.this.arn
}

output "task_role_arn" {
  description = "ARN of the task role: the identity taskgate calls Step Functions with. Cross-account roles must trust it."
  value       = aws_iam_role.task.arn
}

output "task_role_name" {
  description = "Name of the task role."
  value       = aws_iam_role.task.name
}

output "execution_role_arn" {
  description = "ARN of the task execution role (image pulls, logs, mapping and secrets)."
  value       = aws_iam_role.execution.arn
}

output "task_role_policy_json" {
  description = "The least-privilege Step Functions (and event source) policy attached to the task role (what `taskgate iam-policy` prints for the same mapping)."
  value       = module.iam_policy.policy_json
}

output "cross_account_role_policies" {
  description = "For each role in cross_account: the policy that role needs in its own account, as JSON. The role's trust policy must also allow sts:AssumeRole by task_role_arn."
  value       = module.iam_policy.cross_account_policies_json
}

output "stepfunctions_events_topic_arn" {
  description = "The SNS topic of Step Functions' status change events (stepfunctions_events), which the tasks get as TASKGATE_SFN_EVENTS_TOPIC_ARN for the mapping's events.topicArn; null without stepfunctions_events."
  value       = one(module.stepfunctions_events[*].topic_arn)
}

output "log_group_name" {
  description = "CloudWatch Logs group of taskgate (stream prefix taskgate) and the config loader (stream prefix config)."
  value       = aws_cloudwatch_log_group.this.name
}

output "mapping_arn" {
  description = "ARN of the parameter or secret the mapping is read from when a task starts. A change of mapping_yaml deploys new tasks; after changing a mapping_arn parameter yourself, run aws ecs update-service --force-new-deployment."
  value       = local.mapping_arn
}
