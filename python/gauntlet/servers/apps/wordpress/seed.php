<?php
/*
 * Installs WordPress and seeds it, the same way every time: run by gauntlet.servers.apps.seed as
 *   php seed.php DOCROOT IMAGES_DIR POSTS COMMENTS_PER_POST
 * against the seed's own MariaDB (the docroot's wp-config.php points at it). Prints one JSON object:
 * the page types' paths and content markers. Nothing here reaches the network.
 */
if ($argc !== 5) {
    fwrite(STDERR, "usage: php seed.php DOCROOT IMAGES_DIR POSTS COMMENTS_PER_POST\n");
    exit(2);
}
[, $docroot, $images_dir, $posts, $comments_per_post] = $argv;
$posts = (int) $posts;
$comments_per_post = (int) $comments_per_post;

// wp_install() guesses URLs from the request: a port nothing listens on, so no call can wait.
$_SERVER['HTTP_HOST'] = '127.0.0.1:9';
$_SERVER['REQUEST_URI'] = '/';
$_SERVER['SERVER_PROTOCOL'] = 'HTTP/1.1';
define('WP_INSTALLING', true);
require $docroot . '/wp-load.php';
require_once ABSPATH . 'wp-admin/includes/upgrade.php';
require_once ABSPATH . 'wp-admin/includes/image.php';
add_filter('pre_http_request', fn () => new WP_Error('gauntlet_seed', 'the seed makes no HTTP requests'));
add_filter('pre_wp_mail', '__return_false');

const SITE_TITLE = 'Gauntlet WordPress Lab';
const BASE_TIME = 1293840000; // 2011-01-01 00:00:00 UTC, the thesis's year

function seed_date(int $hours): string
{
    return gmdate('Y-m-d H:i:s', BASE_TIME + 3600 * $hours);
}

function paragraphs(int $post): string
{
    $words = ['server', 'worker', 'request', 'latency', 'process', 'thread', 'event', 'socket', 'cache', 'queue'];
    $text = [];
    for ($p = 0; $p < 4; $p++) {
        $sentence = [];
        for ($w = 0; $w < 40; $w++) {
            $sentence[] = $words[($post * 7 + $p * 3 + $w * $w) % count($words)];
        }
        $text[] = '<p>' . ucfirst(implode(' ', $sentence)) . '.</p>';
    }
    return implode("\n", $text);
}

$installed = wp_install(SITE_TITLE, 'gauntlet', 'gauntlet@example.invalid', true, '', 'gauntlet-lab-password');
if (is_wp_error($installed['user_id'] ?? null)) {
    fwrite(STDERR, "wp_install failed\n");
    exit(1);
}
update_option('blogdescription', 'A seeded blog for load tests');
update_option('permalink_structure', '');
update_option('uploads_use_yearmonth_folders', 0);
update_option('template', 'gauntlet');
update_option('stylesheet', 'gauntlet');
update_option('posts_per_page', 10);
update_option('default_comment_status', 'open');
update_option('timezone_string', 'UTC');

$categories = [];
foreach (['Servers', 'Benchmarks', 'Caching', 'Databases'] as $name) {
    $categories[] = (int) wp_insert_term($name, 'category')['term_id'];
}
$images = glob($images_dir . '/*');
sort($images);
$uploads = wp_upload_dir();

function add_comments(int $post_id, int $post, int $count): void
{
    for ($c = 1; $c <= $count; $c++) {
        wp_insert_comment([
            'comment_post_ID' => $post_id,
            'comment_author' => "Reader $c",
            'comment_author_email' => "reader$c@example.invalid",
            'comment_content' => "Seed comment $c on post $post: the figures were measured, not assumed.",
            'comment_approved' => 1,
            'comment_date' => seed_date($post * 24 + $c),
            'comment_date_gmt' => seed_date($post * 24 + $c),
        ]);
    }
}

// The default post (?p=1, the page the thesis's sessions loaded) gets the same comments as the others.
wp_update_post(['ID' => 1, 'post_date' => seed_date(0), 'post_date_gmt' => seed_date(0)]);
add_comments(1, 1, $comments_per_post);

$newest_title = '';
for ($i = 1; $i <= $posts; $i++) {
    $source = $images[$i % count($images)];
    $file = $uploads['basedir'] . sprintf('/seed-%02d.', $i) . pathinfo($source, PATHINFO_EXTENSION);
    copy($source, $file);
    $title = sprintf('Seed post %02d: what bounded the server', $i);
    $post_id = wp_insert_post([
        'post_title' => $title,
        'post_content' => paragraphs($i) . "\n<p><img src=\"/wp-content/uploads/" . basename($file) . "\" alt=\"figure $i\" /></p>",
        'post_status' => 'publish',
        'post_author' => 1,
        'post_date' => seed_date($i * 24),
        'post_date_gmt' => seed_date($i * 24),
        'post_category' => [$categories[$i % count($categories)]],
    ], true);
    if (is_wp_error($post_id)) {
        fwrite(STDERR, $post_id->get_error_message() . "\n");
        exit(1);
    }
    $type = wp_check_filetype(basename($file))['type'];
    $attachment = wp_insert_attachment(['post_mime_type' => $type, 'post_title' => "Figure $i", 'post_status' => 'inherit'], $file, $post_id);
    wp_update_attachment_metadata($attachment, wp_generate_attachment_metadata($attachment, $file));
    set_post_thumbnail($post_id, $attachment);
    add_comments($post_id, $i, $comments_per_post);
    $newest_title = $title;
}

echo json_encode([
    'site_title' => SITE_TITLE,
    'pages' => [
        // The newest post's title is on the home page only when its posts were read from the database.
        'home' => ['path' => '/', 'marker' => $newest_title],
        // A comment is rendered only on its post's own page, after the post and its comments were read.
        'post' => ['path' => '/?p=1', 'marker' => "Seed comment $comments_per_post on post 1: the figures were measured, not assumed."],
    ],
]) . "\n";
