variable "state_machine_arns" {
  description = "Targets of tools on Standard state machines, reached with taskgate's own credentials: state machine, version (NAME:7) or alias (NAME:live) ARNs. taskgate starts, reads, polls and stops their executions."
  type        = list(string)
  default     = []
}

variable "sync_express_state_machine_arns" {
  description = "Targets of tools on Express state machines (taskSupport: forbidden), reached with taskgate's own credentials: taskgate runs them with StartSyncExecution and never reads them again."
  type        = list(string)
  default     = []
}

variable "human_input" {
  description = "Whether some tool on these state machines answers .waitForTaskToken states (SendTaskSuccess and SendTaskFailure, which AWS only grants on \"*\")."
  type        = bool
  default     = false
}

variable "events" {
  description = "Event sources of engine blocks reached with taskgate's own credentials (their events: blocks): the SNS topic of Step Functions' status change events (events.topicArn, the output topic_arn of taskgate-stepfunctions-events) and the prefix of the queues (events.queuePrefix). taskgate makes, reads and deletes queues of the prefix in the topic's account and region, lists queues, and subscribes its queue to the topic."
  type = list(object({
    topic_arn    = string
    queue_prefix = optional(string, "taskgate-")
  }))
  default = []
}

variable "cross_account" {
  description = "State machines taskgate reaches by assuming a role (an engine block's roleArn), one entry per role. taskgate's own policy gets sts:AssumeRole on each role; the output cross_account_policies holds what each role itself needs. events are the event sources of those engine blocks, as the top-level events; their queues are made in the role's account."
  type = list(object({
    role_arn                        = string
    state_machine_arns              = optional(list(string), [])
    sync_express_state_machine_arns = optional(list(string), [])
    human_input                     = optional(bool, false)
    events = optional(list(object({
      topic_arn    = string
      queue_prefix = optional(string, "taskgate-")
    })), [])
  }))
  default = []

  validation {
    condition     = alltrue([for a in var.cross_account : can(regex("^arn:[a-z0-9-]+:iam::[0-9]{12}:role/[^*? ]*[^/*? ]$", a.role_arn))])
    error_message = "Each cross_account role_arn must be an IAM role ARN: arn:PARTITION:iam::ACCOUNT:role/NAME."
  }
}
