# Step Functions' own events as the event source of a taskgate engine block (events: {topicArn: ...}):
# Step Functions puts a "Step Functions Execution Status Change" event on the default event bus for
# each status change of a Standard execution; this rule publishes them to this topic; and each
# taskgate replica creates a queue of its own at start, subscribes it to the topic, and deletes it
# at exit (adapters/stepfunctions/events.go). No broker of taskgate's own, and nothing it keeps.
locals {
  # The events name the state machine without version or alias.
  state_machines = distinct([for arn in var.state_machine_arns : join(":", slice(split(":", arn), 0, 7))])
  event_pattern = merge(
    {
      source        = ["aws.states"]
      "detail-type" = ["Step Functions Execution Status Change"]
    },
    length(local.state_machines) > 0 ? { detail = { stateMachineArn = local.state_machines } } : {},
  )
}

resource "aws_sns_topic" "this" {
  name              = var.name
  kms_master_key_id = var.kms_master_key_id
  tags              = var.tags
}

resource "aws_cloudwatch_event_rule" "this" {
  name          = var.name
  description   = "Step Functions' status changes to taskgate's replicas, through the topic ${var.name}"
  event_pattern = jsonencode(local.event_pattern)
  tags          = var.tags
}

resource "aws_cloudwatch_event_target" "this" {
  rule      = aws_cloudwatch_event_rule.this.name
  target_id = "taskgate"
  arn       = aws_sns_topic.this.arn
}

# Only EventBridge, for this rule, may publish. The replicas subscribe with their own IAM policy
# (taskgate-iam-policy's events input: sns:Subscribe and sns:Unsubscribe on the topic), which is
# enough in the topic's own account.
data "aws_iam_policy_document" "topic" {
  statement {
    sid       = "RulePublishes"
    effect    = "Allow"
    actions   = ["sns:Publish"]
    resources = [aws_sns_topic.this.arn]

    principals {
      type        = "Service"
      identifiers = ["events.amazonaws.com"]
    }
    condition {
      test     = "ArnEquals"
      variable = "aws:SourceArn"
      values   = [aws_cloudwatch_event_rule.this.arn]
    }
  }
}

resource "aws_sns_topic_policy" "this" {
  arn    = aws_sns_topic.this.arn
  policy = data.aws_iam_policy_document.topic.json
}
