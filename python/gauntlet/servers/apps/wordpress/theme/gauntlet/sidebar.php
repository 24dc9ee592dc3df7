<aside class="sidebar">
<h2>Recent posts</h2>
<ul><?php wp_get_archives(['type' => 'postbypost', 'limit' => 5]); ?></ul>
<h2>Recent comments</h2>
<ul>
<?php foreach (get_comments(['number' => 5, 'status' => 'approve']) as $comment) : ?>
<li><?php echo esc_html($comment->comment_author); ?> on <a href="<?php echo esc_url(get_comment_link($comment)); ?>"><?php echo esc_html(get_the_title($comment->comment_post_ID)); ?></a></li>
<?php endforeach; ?>
</ul>
<h2>Categories</h2>
<ul><?php wp_list_categories(['title_li' => '', 'show_count' => true]); ?></ul>
<h2>Archives</h2>
<ul><?php wp_get_archives(['type' => 'monthly']); ?></ul>
</aside>
