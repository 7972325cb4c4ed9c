export { backupDataDir, copyWholeLines, type BackupSummary } from './backup.ts';
