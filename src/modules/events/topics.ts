/**
 * The event topics and, per topic, the kinds of event it carries (docs/events.md). A producer
 * records only what is listed here, so the REST topic list, the GraphQL descriptions and the
 * automation rule validation all come from this one table. Add a kind here before recording it.
 */
export const EVENT_TOPICS = {
  device_approvals: {
    description: 'Device authorization decisions: a device approved or denied for this tenant.',
    kinds: ['device_approved', 'device_denied'],
  },
  node_lifecycle: {
    description: 'Collector nodes enrolled, activated, and connected to or disconnected from the control channel.',
    kinds: ['node_enrolled', 'node_activated', 'node_connected', 'node_disconnected'],
  },
  detections: {
    description: "Detection runs over this tenant's flows, scheduled or on demand, with what they opened, updated and closed.",
    kinds: ['detection_run_completed', 'detection_run_failed'],
  },
  investigations: {
    description:
      'Investigations opened, updated (new evidence, verdict or severity) and closed, and confirmed (answered UNAUTHORIZED: the activity was not authorized).',
    kinds: ['investigation_opened', 'investigation_updated', 'investigation_closed', 'investigation_confirmed'],
  },
  automation_runs: {
    description: 'Automation rule runs that finished: succeeded, or failed after their last attempt.',
    kinds: ['run_succeeded', 'run_failed'],
  },
  triage: {
    description: 'What people and API clients made of investigations: answers to "was this authorized?", status changes, comments and assignments.',
    kinds: ['investigation_answered', 'investigation_status_changed', 'investigation_commented', 'investigation_assigned'],
  },
  suppressions: {
    description: 'Suppressions created by an AUTHORIZED answer, and revoked: subjects detection leaves alone.',
    kinds: ['suppression_created', 'suppression_revoked'],
  },
  sign_ins: {
    description: "Console sign-ins of this tenant's people: succeeded, failed (wrong password or code, locked, disabled) and signed out.",
    kinds: ['signed_in', 'sign_in_failed', 'signed_out'],
  },
} as const satisfies Record<string, { description: string; kinds: readonly string[] }>;

export type EventTopicName = keyof typeof EVENT_TOPICS;
export type EventKind<T extends EventTopicName = EventTopicName> = (typeof EVENT_TOPICS)[T]['kinds'][number];

export const topicNames = Object.keys(EVENT_TOPICS) as EventTopicName[];

export const isTopic = (value: string): value is EventTopicName => Object.hasOwn(EVENT_TOPICS, value);

export const kindsOf = (topic: EventTopicName): readonly string[] => EVENT_TOPICS[topic].kinds;
