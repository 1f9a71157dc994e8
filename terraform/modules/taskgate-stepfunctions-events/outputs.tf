output "topic_arn" {
  description = "The SNS topic of the status change events: the engine block's events.topicArn, and the topic_arn of taskgate-iam-policy's events."
  value       = aws_sns_topic.this.arn
}

output "rule_arn" {
  description = "ARN of the EventBridge rule on the default bus."
  value       = aws_cloudwatch_event_rule.this.arn
}

output "rule_name" {
  description = "Name of the EventBridge rule on the default bus."
  value       = aws_cloudwatch_event_rule.this.name
}
