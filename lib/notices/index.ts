export { NOTICE_LEAD_MS, noticeDue, noticeWindow, noticesDue, type DueNotice } from './rules.ts';
export { composeNotice, formatInr, formatPeriodEnd, paymentLink, type NoticeContent, type NoticeMessage } from './compose.ts';
export { DEFAULT_MAIL_FROM, createMailer, isPermanentMailError, outboxDir, type Mailer, type MailerEnv, type MailerOptions } from './mailer.ts';
export { runNoticeJob, type NoticeJobCounts, type NoticeJobOptions, type NoticeLog } from './job.ts';
export { scheduleNotices, type ScheduleNoticesOptions } from './schedule.ts';
export { DEFAULT_NOTICE_CRON, noticeSettingsOf, publicBaseUrlOf, type NoticeSettings } from './settings.ts';
